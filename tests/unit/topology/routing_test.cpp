// Shortest paths: deterministic, symmetric, sub-path consistent, matching a
// brute-force minimum under the documented order; expand, next hops, ECMP.

#include "helpers.hpp"
#include "topology/builders.hpp"
#include "topology/yaml_io.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <random>

using namespace laps::topology;
using namespace laps::topology::test;

namespace {

void check_routing_properties(const fabric& f, bool brute_force)
{
    const routing r(f);
    for (node_id a = 0; a < f.node_count(); ++a) {
        for (node_id b = 0; b < f.node_count(); ++b) {
            const auto p = r.shortest_path(a, b);
            ASSERT_EQ(p.front(), a);
            ASSERT_EQ(p.back(), b);
            ASSERT_TRUE(is_loopless(p)) << describe_path(f, p);
            // Symmetric: ACKs retrace the data path.
            ASSERT_EQ(r.shortest_path(b, a), reversed(p)) << describe_path(f, p);
            ASSERT_EQ(r.distance(a, b), a == b ? path_cost{} : make_path_key(f, p).cost);
            if (brute_force && a != b) {
                ASSERT_EQ(p, brute_force_best(f, a, b)) << describe_path(f, p);
            }
            // Every sub-path is a best path: hop-by-hop forwarding toward an
            // anchor reproduces the source's expansion.
            for (std::size_t i = 0; i + 1 < p.size(); ++i) {
                ASSERT_EQ(r.next_hop(p[i], b), p[i + 1]);
                for (std::size_t j = i + 1; j < p.size(); ++j) {
                    ASSERT_TRUE(r.is_shortest(std::span(p).subspan(i, j - i + 1)));
                }
            }
        }
    }
}

} // namespace

TEST(topology_routing, paper_fabrics_and_fat_tree)
{
    check_routing_properties(fabric(rail_spec({.clusters = 4, .gpus = 4})), true);
    check_routing_properties(fabric(dragonfly_spec({})), false);
    check_routing_properties(fabric(fat_tree_spec({.k = 4})), true);
    check_routing_properties(fabric(leaf_spine_spec({})), true);
}

TEST(topology_routing, random_graphs_match_brute_force)
{
    for (std::uint32_t seed = 1; seed <= 12; ++seed) {
        SCOPED_TRACE(seed);
        check_routing_properties(random_fabric(seed, 6, 7, 6, seed % 2 == 0), true);
    }
}

TEST(topology_routing, tie_break_avoids_the_highest_node)
{
    // Fat-tree k=4: from h0_0_0 to a host in pod 1 there are 4 equal paths;
    // the best avoids the highest-numbered nodes: core0_0 (the lowest core)
    // through agg0_0 and agg1_0.
    const fabric f(fat_tree_spec({.k = 4}));
    const routing r(f);
    const auto p = r.shortest_path(*f.find("h0_0_0"), *f.find("h1_0_0"));
    std::vector<std::string> names;
    for (const auto n : p) {
        names.push_back(f.name(n));
    }
    EXPECT_EQ(names, (std::vector<std::string>{"h0_0_0", "edge0_0", "agg0_0", "core0_0", "agg1_0", "edge1_0", "h1_0_0"}));
}

TEST(topology_routing, ecmp_next_hops)
{
    const fabric f(fat_tree_spec({.k = 4}));
    const routing r(f);
    const node_id src = *f.find("h0_0_0");
    const node_id dst = *f.find("h3_1_1");
    auto names = [&](const std::vector<node_id>& ns) {
        std::vector<std::string> out;
        for (const auto n : ns) {
            out.push_back(f.name(n));
        }
        return out;
    };
    EXPECT_EQ(names(r.ecmp_next_hops(src, dst)), (std::vector<std::string>{"edge0_0"}));
    EXPECT_EQ(names(r.ecmp_next_hops(*f.find("edge0_0"), dst)), (std::vector<std::string>{"agg0_0", "agg0_1"}));
    EXPECT_EQ(names(r.ecmp_next_hops(*f.find("agg0_1"), dst)), (std::vector<std::string>{"core1_0", "core1_1"}));
    EXPECT_EQ(names(r.ecmp_next_hops(*f.find("core1_1"), dst)), (std::vector<std::string>{"agg3_1"}));
    EXPECT_EQ(names(r.ecmp_next_hops(*f.find("edge3_1"), dst)), (std::vector<std::string>{"h3_1_1"}));
    EXPECT_TRUE(r.ecmp_next_hops(dst, dst).empty());
    // Inside a pod: both aggregation switches.
    EXPECT_EQ(names(r.ecmp_next_hops(*f.find("edge0_0"), *f.find("h0_1_0"))),
              (std::vector<std::string>{"agg0_0", "agg0_1"}));
    // The tie-broken next hop is always one of them.
    for (node_id at = 0; at < f.node_count(); ++at) {
        if (at != dst) {
            const auto group = r.ecmp_next_hops(at, dst);
            EXPECT_NE(std::find(group.begin(), group.end(), r.next_hop(at, dst)), group.end());
        }
    }
}

TEST(topology_routing, expand)
{
    const fabric f(fat_tree_spec({.k = 4}));
    const routing r(f);
    const node_id a = *f.find("h0_0_0");
    const node_id b = *f.find("h2_0_0");
    EXPECT_EQ(r.expand(a, {}, b), r.shortest_path(a, b));
    const std::vector<node_id> via{*f.find("core1_1")};
    const auto p = r.expand(a, via, b);
    std::vector<std::string> names;
    for (const auto n : p) {
        names.push_back(f.name(n));
    }
    EXPECT_EQ(names, (std::vector<std::string>{"h0_0_0", "edge0_0", "agg0_1", "core1_1", "agg2_1", "edge2_0", "h2_0_0"}));
    // An anchor equal to an end is harmless.
    EXPECT_EQ(r.expand(a, std::vector<node_id>{a}, b), r.shortest_path(a, b));
    EXPECT_THROW(r.expand(a, std::vector<node_id>{999999}, b), path_error);
}

TEST(topology_routing, anchors_fail_on_a_link_that_is_never_best)
{
    // a - s1 - b with a heavy direct a - b link: a > b can never be forced.
    const fabric f = parse_fabric(R"(
hosts: [a, b]
switches: [s1]
defaults: {rate_gbps: 100}
links:
  - {a: a, b: s1}
  - {a: s1, b: b}
  - {a: a, b: b, weight: 5}
)");
    const routing r(f);
    EXPECT_THROW(compute_anchors(r, std::vector<node_id>{0, 1}), path_error);
    EXPECT_TRUE(compute_anchors(r, std::vector<node_id>{0, 2, 1}).empty());
}
