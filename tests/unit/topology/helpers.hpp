#pragma once
// Shared checks for the topology tests.

#include "topology/anchors.hpp"
#include "topology/candidates.hpp"
#include "topology/path.hpp"
#include "topology/routing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <set>
#include <string>

namespace laps::topology::test {

// "s3": built by appending, since GCC 12 wrongly flags "literal" + std::string
// under -Wrestrict.
inline std::string indexed(std::string_view prefix, std::size_t i)
{
    std::string s(prefix);
    s += std::to_string(i);
    return s;
}

// Every loopless path from a to b of weight at most `max_weight` (depth-first).
inline std::vector<std::vector<node_id>> all_paths(const fabric& f, node_id a, node_id b,
                                                  std::uint32_t max_weight = 1u << 30)
{
    std::vector<std::vector<node_id>> out;
    std::vector<node_id> path{a};
    std::vector<bool> on(f.node_count(), false);
    on[a] = true;
    std::function<void(node_id, std::uint32_t)> dfs = [&](node_id u, std::uint32_t weight) {
        if (u == b) {
            out.push_back(path);
            return;
        }
        for (const auto& adj : f.neighbours(u)) {
            const std::uint32_t w = weight + f.link_at(adj.link).weight;
            if (!on[adj.peer] && w <= max_weight) {
                on[adj.peer] = true;
                path.push_back(adj.peer);
                dfs(adj.peer, w);
                path.pop_back();
                on[adj.peer] = false;
            }
        }
    };
    dfs(a, 0);
    return out;
}

// The paths of all_paths() in path order (path.hpp).
inline std::vector<std::vector<node_id>> sorted_paths(const fabric& f, node_id a, node_id b,
                                                     std::uint32_t max_weight = 1u << 30)
{
    auto paths = all_paths(f, a, b, max_weight);
    std::vector<std::pair<path_key, std::size_t>> keyed;
    for (std::size_t i = 0; i < paths.size(); ++i) {
        keyed.emplace_back(make_path_key(f, paths[i]), i);
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<std::vector<node_id>> out;
    for (const auto& [key, i] : keyed) {
        out.push_back(paths[i]);
    }
    return out;
}

inline std::vector<node_id> brute_force_best(const fabric& f, node_id a, node_id b)
{
    return sorted_paths(f, a, b).front();
}

// A random connected fabric with ties on purpose (few distinct delays and
// weights); a third of the hosts have two links, so they relay.
inline fabric random_fabric(std::uint32_t seed, std::size_t hosts, std::size_t switches, std::size_t extra_links,
                            bool weights)
{
    std::mt19937 rng(seed);
    fabric_spec s;
    for (std::size_t i = 0; i < hosts; ++i) {
        s.hosts.push_back({indexed("h", i), std::nullopt, no_group, {}});
    }
    for (std::size_t i = 0; i < switches; ++i) {
        s.switches.push_back({indexed("s", i), no_group, {}});
    }
    std::set<std::pair<std::size_t, std::size_t>> used;
    auto name = [&](std::size_t i) { return i < hosts ? s.hosts[i].name : s.switches[i - hosts].name; };
    auto add = [&](std::size_t a, std::size_t b) {
        if (a == b || !used.insert({std::min(a, b), std::max(a, b)}).second) {
            return;
        }
        const std::int64_t delay = std::uniform_int_distribution<int>(1, 3)(rng) * 100;
        const std::uint32_t weight = weights ? std::uniform_int_distribution<std::uint32_t>(1, 3)(rng) : 1;
        s.links.push_back({name(a), name(b), 100, delay, weight, {}});
    };
    // A spanning tree over the switches, then hosts, then extra switch links.
    for (std::size_t i = 1; i < switches; ++i) {
        add(hosts + i, hosts + std::uniform_int_distribution<std::size_t>(0, i - 1)(rng));
    }
    for (std::size_t h = 0; h < hosts; ++h) {
        add(h, hosts + std::uniform_int_distribution<std::size_t>(0, switches - 1)(rng));
        if (h % 3 == 0) {
            add(h, hosts + std::uniform_int_distribution<std::size_t>(0, switches - 1)(rng));
        }
    }
    for (std::size_t i = 0; i < extra_links; ++i) {
        add(hosts + std::uniform_int_distribution<std::size_t>(0, switches - 1)(rng),
            hosts + std::uniform_int_distribution<std::size_t>(0, switches - 1)(rng));
    }
    return fabric(s);
}

inline std::string source_path(const std::string& relative)
{
    return std::string(LAPS_SOURCE_ROOT) + "/" + relative;
}

// Every candidate of every (src, dst) pair: starts at src, ends at dst, no
// loop, consecutive nodes linked, reproduced by its anchors, and its reverse
// reproduced by the reversed anchors. Returns the number of paths checked.
inline std::size_t check_all_candidates(const path_planner& planner, std::size_t max_anchor_count = 4)
{
    const routing& r = planner.routes();
    const fabric& f = r.topology();
    std::size_t checked = 0;
    for (node_id src = 0; src < f.host_count(); ++src) {
        for (node_id dst = 0; dst < f.host_count(); ++dst) {
            if (src == dst) {
                continue;
            }
            const auto cands = planner.candidates(src, dst);
            EXPECT_FALSE(cands.empty()) << f.name(src) << " -> " << f.name(dst);
            for (const auto& c : cands) {
                const std::string what = describe_path(f, c.nodes);
                EXPECT_EQ(c.nodes.front(), src) << what;
                EXPECT_EQ(c.nodes.back(), dst) << what;
                EXPECT_TRUE(is_loopless(c.nodes)) << what;
                EXPECT_NO_THROW(make_path_key(f, c.nodes)) << what;
                EXPECT_LE(c.anchors.size(), max_anchor_count) << what;
                EXPECT_EQ(r.expand(src, c.anchors, dst), c.nodes) << what;
                const auto back = reversed(c.nodes);
                EXPECT_EQ(r.expand(dst, reverse_anchors(c.anchors), src), back) << what;
                // The reverse needs as many anchors (maybe other ones: minimal
                // anchor lists are not unique).
                EXPECT_EQ(compute_anchors(r, back).size(), c.anchors.size()) << what;
                ++checked;
            }
        }
    }
    return checked;
}

} // namespace laps::topology::test
