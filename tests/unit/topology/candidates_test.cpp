// Candidate paths and per-host tables: the paper's counts (Table I), path
// properties on rail, dragonfly and fat-tree, anchors, pids, determinism.

#include "helpers.hpp"
#include "tables/path_table.hpp"
#include "topology/builders.hpp"
#include "topology/summary.hpp"
#include "topology/yaml_io.hpp"

#include <tbb/global_control.h>

#include <gtest/gtest.h>

#include <mutex>

using namespace laps::topology;
using laps::topology::test::check_all_candidates;
using laps::topology::test::indexed;

namespace {

using histogram = std::map<std::size_t, std::size_t>;

table_summary summarise(const path_planner& planner, node_id host)
{
    table_summary s;
    s.add(planner.table(host));
    return s;
}

std::vector<node_id> all_hosts(const fabric& f)
{
    std::vector<node_id> hosts(f.host_count());
    for (node_id h = 0; h < f.host_count(); ++h) {
        hosts[h] = h;
    }
    return hosts;
}

} // namespace

TEST(topology_candidates, rail_table_one)
{
    const fabric f(rail_spec({}));
    const routing r(f);
    const path_planner planner(r, {}, {});
    EXPECT_EQ(planner.strategy(), path_strategy::paper);
    for (const node_id host : {0u, 13u, 63u}) {
        const auto s = summarise(planner, host);
        EXPECT_EQ(s.pst_entries, 63u);
        EXPECT_EQ(s.pit_entries, 455u); // 7 x 1 + (7 x 8) x 8
        EXPECT_EQ(s.paths_per_destination, (histogram{{1, 7}, {8, 56}}));
    }
    // Inside a cluster through the NVLink switch; between clusters one path
    // per rail switch, each through its rail switch.
    const auto intra = planner.candidates(0, 5);
    ASSERT_EQ(intra.size(), 1u);
    EXPECT_EQ(intra[0].nodes, (std::vector<node_id>{0, *f.find("nvlink0"), 5}));
    const auto inter = planner.candidates(*f.find("gpu0_1"), *f.find("gpu3_5"));
    ASSERT_EQ(inter.size(), 8u);
    std::set<node_id> rails;
    for (const auto& c : inter) {
        for (const auto n : c.nodes) {
            if (f.name(n).starts_with("rail")) {
                rails.insert(n);
            }
        }
        EXPECT_LE(c.anchors.size(), 1u);
    }
    EXPECT_EQ(rails.size(), 8u);
    EXPECT_EQ(inter[0].hops(), 4u); // through rail 1 or rail 5 first
    EXPECT_EQ(inter[7].hops(), 6u);
}

TEST(topology_candidates, dragonfly_table_one)
{
    const fabric f(dragonfly_spec({}));
    const routing r(f);
    const path_planner planner(r, {}, {});
    for (const node_id host : {0u, 77u, 143u}) {
        const auto s = summarise(planner, host);
        EXPECT_EQ(s.pst_entries, 143u);
        EXPECT_EQ(s.pit_entries, 1063u); // 3 x 1 + (3 x 4) x 3 + (8 x 4 x 4) x 8
        EXPECT_EQ(s.paths_per_destination, (histogram{{1, 3}, {3, 12}, {8, 128}}));
    }
}

TEST(topology_candidates, dragonfly_longest_candidate_needs_one_anchor)
{
    const fabric f(dragonfly_spec({}));
    const routing r(f);
    const path_planner planner(r, {}, {});
    std::size_t longest = 0;
    std::size_t max_anchors = 0;
    for (node_id dst = 1; dst < f.host_count(); ++dst) {
        for (const auto& c : planner.candidates(0, dst)) {
            longest = std::max(longest, c.hops());
            max_anchors = std::max(max_anchors, c.anchors.size());
        }
    }
    EXPECT_EQ(longest, 7u); // host, local, global, local, global, local, host
    EXPECT_EQ(max_anchors, 1u);

    // An inter-group path through an intermediate group: the anchor is a
    // switch of that group, and the path visits only the three groups.
    const node_id dst = *f.find("h6_1_0");
    const auto cands = planner.candidates(0, dst);
    ASSERT_EQ(cands.size(), 8u);
    EXPECT_TRUE(cands[0].anchors.empty()); // the direct path
    std::set<std::int32_t> intermediate;
    for (std::size_t i = 1; i < cands.size(); ++i) {
        const auto& c = cands[i];
        ASSERT_EQ(c.anchors.size(), 1u);
        const std::int32_t via = f.at(c.anchors[0]).group;
        EXPECT_NE(via, 0);
        EXPECT_NE(via, 6);
        intermediate.insert(via);
        for (const auto n : c.nodes) {
            const auto g = f.at(n).group;
            EXPECT_TRUE(g == 0 || g == 6 || g == via) << describe_path(f, c.nodes);
        }
        if (c.hops() == 7) {
            EXPECT_EQ(f.at(c.anchors[0]).group, via);
        }
    }
    EXPECT_EQ(intermediate.size(), 7u);
}

TEST(topology_candidates, paper_paths_are_sound)
{
    {
        const fabric f(rail_spec({.clusters = 4, .gpus = 4}));
        const routing r(f);
        EXPECT_EQ(check_all_candidates(path_planner(r, {}, {})), 16u * (3 * 1 + 12 * 4));
    }
    {
        const fabric f(dragonfly_spec({}));
        const routing r(f);
        EXPECT_EQ(check_all_candidates(path_planner(r, {}, {}), 1), 144u * 1063u);
    }
}

TEST(topology_candidates, fat_tree_yen_paths_are_sound)
{
    const fabric f(fat_tree_spec({.k = 4}));
    const routing r(f);
    const path_planner planner(r, parse_path_options("yen:k=8,stretch=2"), {});
    EXPECT_EQ(planner.strategy(), path_strategy::yen);
    EXPECT_GT(check_all_candidates(planner), 16u * 15u);
    // Same edge: 1 path. Same pod: the 2 shortest (via each aggregation
    // switch) come first. Other pod: 4 shortest first, then longer ones.
    const auto same_edge = planner.candidates(0, 1);
    EXPECT_EQ(same_edge.size(), 1u);
    const auto other_pod = planner.candidates(0, *f.find("h2_1_0"));
    ASSERT_EQ(other_pod.size(), 8u);
    for (std::size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(other_pod[i].hops(), 6u);
    }
    for (std::size_t i = 1; i < other_pod.size(); ++i) {
        EXPECT_LE(other_pod[i - 1].hops(), other_pod[i].hops());
    }
    // The four shortest need at most one anchor (the best has none).
    EXPECT_TRUE(other_pod[0].anchors.empty());
    for (std::size_t i = 1; i < 4; ++i) {
        EXPECT_EQ(other_pod[i].anchors.size(), 1u);
    }
}

TEST(topology_candidates, tables_have_dense_pids_in_order)
{
    const fabric f(dragonfly_spec({.groups = 5, .switches_per_group = 2, .hosts_per_switch = 2}));
    const routing r(f);
    const path_planner planner(r, {}, {});
    for (node_id src = 0; src < f.host_count(); ++src) {
        const auto spec = planner.table(src);
        ASSERT_EQ(spec.pst.size(), f.host_count() - 1);
        std::size_t pid = 0;
        std::size_t row = 0;
        for (node_id dst = 0; dst < f.host_count(); ++dst) {
            if (dst == src) {
                continue;
            }
            const auto& pst = spec.pst[row++];
            EXPECT_EQ(pst.destination, f.address_of(dst));
            const auto cands = planner.candidates(src, dst);
            ASSERT_EQ(pst.pids.size(), cands.size());
            for (std::size_t i = 0; i < cands.size(); ++i) {
                ASSERT_EQ(pst.pids[i], pid);
                const auto& pit = spec.pit[pid];
                EXPECT_EQ(pit.pid, pid);
                EXPECT_TRUE(pit.valid);
                EXPECT_EQ(pit.hop_count, cands[i].hops());
                ASSERT_EQ(pit.anchor_count, cands[i].anchors.size());
                for (std::size_t a = 0; a < pit.anchor_count; ++a) {
                    EXPECT_EQ(pit.anchors[a], cands[i].anchors[a]);
                }
                // The table's shared-sum delays equal the per-path computation.
                EXPECT_EQ(pit.base_ns, cands[i].delay.base_ns);
                EXPECT_EQ(pit.uncongested_ns, cands[i].delay.uncongested_ns);
                ++pid;
            }
        }
        EXPECT_EQ(spec.pit.size(), pid);
        // The tables library accepts it.
        EXPECT_NO_THROW(laps::tables::path_table(spec, {}));
    }
}

TEST(topology_candidates, tables_do_not_depend_on_threads)
{
    const fabric f(fat_tree_spec({.k = 4}));
    const routing r(f);
    const path_planner planner(r, parse_path_options("yen:k=6,stretch=2"), {});
    const auto hosts = all_hosts(f);
    auto collect = [&](int threads) {
        const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        std::vector<std::string> out(f.host_count());
        std::mutex lock;
        planner.for_each_table(hosts, [&](node_id h, const laps::tables::table_spec& spec) {
            std::string s;
            for (const auto& row : spec.pit) {
                s += std::to_string(row.pid) + ":" + std::to_string(row.base_ns) + ":" +
                     std::to_string(row.anchor_count) + ":" + std::to_string(row.anchors[0]) + ";";
            }
            const std::lock_guard g(lock);
            out[h] = s;
        });
        return out;
    };
    const auto one = collect(1);
    const auto many = collect(4);
    EXPECT_EQ(one, many);
    // And equal to building each table alone.
    for (node_id h = 0; h < f.host_count(); ++h) {
        const auto spec = planner.table(h);
        std::string s;
        for (const auto& row : spec.pit) {
            s += std::to_string(row.pid) + ":" + std::to_string(row.base_ns) + ":" + std::to_string(row.anchor_count) +
                 ":" + std::to_string(row.anchors[0]) + ";";
        }
        EXPECT_EQ(s, one[h]);
    }
}

TEST(topology_candidates, strategy_errors)
{
    const fabric f(fat_tree_spec({.k = 4}));
    const routing r(f);
    EXPECT_THROW(path_planner(r, parse_path_options("paper"), {}), path_error);
    EXPECT_THROW(parse_path_options("yen:k=17"), topology_error);
    EXPECT_THROW(parse_path_options("yen:k=0"), topology_error);
    EXPECT_THROW(parse_path_options("yen:stretch=0.5"), topology_error);
    EXPECT_THROW(parse_path_options("yen:depth=3"), topology_error);
    EXPECT_THROW(parse_path_options("dijkstra"), topology_error);
    EXPECT_EQ(to_string(parse_path_options("yen:k=3,stretch=1.5")), "yen:k=3,stretch=1.5");

    // Too many anchors: a - s0 - s1 - s2 - s3 - b, where every step s_i - s_(i+1)
    // also has a detour s_i - c_i - d_i - s_(i+1). The c and d switches have
    // the highest ids, so ties never favour them: the path taking all three
    // detours needs both c_i and d_i as anchors, 6 in all.
    fabric_spec chain;
    chain.hosts = {{"a", std::nullopt, no_group, {}}, {"b", std::nullopt, no_group, {}}};
    for (int i = 0; i < 4; ++i) {
        chain.switches.push_back({indexed("s", i), no_group, {}});
    }
    chain.links.push_back({"a", "s0", 100, 0, 1, {}});
    chain.links.push_back({"s3", "b", 100, 0, 1, {}});
    for (int i = 0; i < 3; ++i) {
        const std::string s = indexed("s", i);
        const std::string next = indexed("s", i + 1);
        const std::string c = indexed("c", i);
        const std::string d = indexed("d", i);
        chain.switches.push_back({c, no_group, {}});
        chain.switches.push_back({d, no_group, {}});
        chain.links.push_back({s, next, 100, 0, 1, {}});
        chain.links.push_back({s, c, 100, 0, 1, {}});
        chain.links.push_back({c, d, 100, 0, 1, {}});
        chain.links.push_back({d, next, 100, 0, 1, {}});
    }
    const fabric cf(chain);
    const routing cr(cf);
    const path_planner cp(cr, parse_path_options("yen:k=16,stretch=3"), {});
    try {
        cp.table(0);
        FAIL() << "expected too many anchors";
    } catch (const path_error& e) {
        EXPECT_NE(std::string(e.what()).find("needs 6 anchors, more than the 4"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("path s0 > c0 > d0 > s1 > c1 > d1 > s2 > c2 > d2 > s3"),
                  std::string::npos)
            << e.what();
    }
}
