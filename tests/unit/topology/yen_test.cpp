// Yen's k shortest loopless paths against a brute-force enumeration of every
// loopless path, sorted by the same order (path.hpp).

#include "helpers.hpp"
#include "topology/builders.hpp"
#include "topology/yen.hpp"

#include <gtest/gtest.h>

using namespace laps::topology;
using namespace laps::topology::test;

namespace {

void expect_matches_brute_force(const fabric& f, node_id a, node_id b, std::uint32_t k, std::uint32_t max_weight)
{
    const routing r(f);
    auto expected = sorted_paths(f, a, b, max_weight);
    if (expected.size() > k) {
        expected.resize(k);
    }
    const auto got = k_shortest_paths(r, a, b, k, max_weight);
    ASSERT_EQ(got.size(), expected.size()) << f.name(a) << " -> " << f.name(b);
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i], expected[i]) << f.name(a) << " -> " << f.name(b) << " #" << i << ": "
                                       << describe_path(f, got[i]) << " vs " << describe_path(f, expected[i]);
    }
}

} // namespace

TEST(topology_yen, fat_tree_k4)
{
    const fabric f(fat_tree_spec({.k = 4}));
    for (const auto& [a, b] : {std::pair{"h0_0_0", "h0_0_1"}, {"h0_0_0", "h0_1_0"}, {"h0_0_0", "h3_1_1"},
                               {"h2_1_0", "h1_0_1"}}) {
        for (const std::uint32_t k : {1u, 3u, 8u, 16u}) {
            expect_matches_brute_force(f, *f.find(a), *f.find(b), k, 10);
        }
    }
}

TEST(topology_yen, leaf_spine_and_rail)
{
    {
        leaf_spine_params p;
        p.leaves = 3;
        p.spines = 3;
        p.hosts_per_leaf = 2;
        p.uplink_rates_gbps = {10, 1, 1};
        const fabric f(leaf_spine_spec(p));
        for (node_id b = 1; b < f.host_count(); ++b) {
            expect_matches_brute_force(f, 0, b, 16, 8);
        }
    }
    {
        const fabric f(rail_spec({.clusters = 3, .gpus = 3}));
        for (node_id b = 1; b < f.host_count(); ++b) {
            expect_matches_brute_force(f, 0, b, 12, 8);
        }
    }
}

TEST(topology_yen, small_dragonfly)
{
    const fabric f(dragonfly_spec({.groups = 4, .switches_per_group = 3, .hosts_per_switch = 1, .global_links = 1}));
    for (node_id b = 1; b < f.host_count(); b += 2) {
        expect_matches_brute_force(f, 0, b, 10, 14);
    }
}

TEST(topology_yen, random_graphs)
{
    for (std::uint32_t seed = 1; seed <= 30; ++seed) {
        SCOPED_TRACE(seed);
        const fabric f = random_fabric(seed, 5, 7, 5 + seed % 4, seed % 3 == 0);
        for (node_id a = 0; a < f.host_count(); ++a) {
            for (node_id b = 0; b < f.host_count(); ++b) {
                if (a != b) {
                    expect_matches_brute_force(f, a, b, 1 + seed % 9, 1u << 20);
                }
            }
        }
    }
}

TEST(topology_yen, weight_limit_and_small_cases)
{
    const fabric f(fat_tree_spec({.k = 4}));
    const routing r(f);
    // Within a stretch of 1 only the 4 equal shortest paths remain.
    EXPECT_EQ(k_shortest_paths(r, 0, *f.find("h3_0_0"), 8, 6).size(), 4u);
    EXPECT_TRUE(k_shortest_paths(r, 0, *f.find("h3_0_0"), 8, 5).empty());
    EXPECT_EQ(k_shortest_paths(r, 0, 0, 8, 6), (std::vector<std::vector<node_id>>{{0}}));
    EXPECT_TRUE(k_shortest_paths(r, 0, 5, 0, 6).empty());
    // Behind the same switch there is only one loopless path.
    EXPECT_EQ(k_shortest_paths(r, 0, 1, 8, 100).size(), 1u);
}
