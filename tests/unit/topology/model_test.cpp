// The fabric model and the builders: sizes, node ids, names, addresses,
// validation errors.

#include "topology/builders.hpp"
#include "topology/model.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace laps::topology;
using laps::tables::address;

namespace {

std::string error_of(const fabric_spec& spec)
{
    try {
        fabric f(spec);
    } catch (const topology_error& e) {
        return e.what();
    }
    return "no error";
}

fabric_spec tiny()
{
    fabric_spec s;
    s.hosts = {{"a", std::nullopt, no_group, {}}, {"b", std::nullopt, no_group, {}}};
    s.switches = {{"s", no_group, {}}};
    s.links = {{"a", "s", 100, 1000, 1, {}}, {"s", "b", 100, 1000, 1, {}}};
    return s;
}

} // namespace

TEST(topology_model, rail_default_is_the_papers)
{
    const fabric f(rail_spec({}));
    EXPECT_EQ(f.family(), fabric_family::rail);
    EXPECT_EQ(f.host_count(), 64u);
    EXPECT_EQ(f.switch_count(), 16u);
    EXPECT_EQ(f.link_count(), 128u);
    // Hosts first: cluster c, GPU g is host c * 8 + g; then rails, then NVLink switches.
    EXPECT_EQ(f.name(0), "gpu0_0");
    EXPECT_EQ(f.name(11), "gpu1_3");
    EXPECT_EQ(f.at(11).group, 1);
    EXPECT_EQ(f.name(64), "rail0");
    EXPECT_EQ(f.name(72), "nvlink0");
    EXPECT_TRUE(f.link_between(11, 64 + 3));
    EXPECT_TRUE(f.link_between(11, 72 + 1));
    EXPECT_FALSE(f.link_between(11, 64 + 2));
}

TEST(topology_model, dragonfly_default_is_the_papers)
{
    const fabric f(dragonfly_spec({}));
    EXPECT_EQ(f.host_count(), 144u);
    EXPECT_EQ(f.switch_count(), 36u);
    // 144 host links + 9 x 6 local + 36 global.
    EXPECT_EQ(f.link_count(), 144u + 54u + 36u);
    // Every switch: 4 hosts, 3 local, 2 global links; every pair of groups joined once.
    std::set<std::pair<int, int>> group_pairs;
    for (node_id s = 144; s < 180; ++s) {
        EXPECT_EQ(f.neighbours(s).size(), 9u) << f.name(s);
        for (const auto& a : f.neighbours(s)) {
            const auto g1 = f.at(s).group;
            const auto g2 = f.at(a.peer).group;
            if (!f.is_host(a.peer) && g1 != g2) {
                EXPECT_EQ(f.link_at(a.link).weight, 3u);
                group_pairs.insert({std::min(g1, g2), std::max(g1, g2)});
            }
        }
    }
    EXPECT_EQ(group_pairs.size(), 36u);
    // Consecutive assignment: switch 0 of group 0 reaches groups 1 and 2.
    const node_id sw0_0 = *f.find("sw0_0");
    std::set<int> reached;
    for (const auto& a : f.neighbours(sw0_0)) {
        if (f.at(a.peer).group != 0) {
            reached.insert(f.at(a.peer).group);
        }
    }
    EXPECT_EQ(reached, (std::set<int>{1, 2}));
}

TEST(topology_model, dragonfly_rejects_uneven_global_links)
{
    dragonfly_params p;
    p.global_links = 3; // 12 ports for 8 other groups
    EXPECT_THROW(dragonfly_spec(p), topology_error);
}

TEST(topology_model, fat_tree_sizes)
{
    for (const std::uint32_t k : {2u, 4u, 8u}) {
        const fabric f(fat_tree_spec({.k = k}));
        EXPECT_EQ(f.host_count(), k * k * k / 4);
        EXPECT_EQ(f.switch_count(), k * k + k * k / 4); // k pods x k switches + (k/2)^2 cores
        EXPECT_EQ(f.link_count(), 3 * k * k * k / 4);
    }
    EXPECT_THROW(fat_tree_spec({.k = 3}), topology_error);
}

TEST(topology_model, leaf_spine_uplink_overrides)
{
    leaf_spine_params p;
    p.spines = 3;
    p.uplink_rates_gbps = {10, 10, 1};
    const fabric f(leaf_spine_spec(p));
    EXPECT_EQ(f.link_at(*f.link_between(*f.find("leaf2"), *f.find("spine2"))).rate_gbps, 1.0);
    EXPECT_EQ(f.link_at(*f.link_between(*f.find("leaf2"), *f.find("spine1"))).rate_gbps, 10.0);
    p.uplink_rates_gbps = {10};
    EXPECT_THROW(leaf_spine_spec(p), topology_error);
}

TEST(topology_model, default_and_given_addresses)
{
    auto spec = tiny();
    spec.hosts[1].address = address::parse("192.168.1.7");
    const fabric f(spec);
    EXPECT_EQ(f.address_of(0).to_string(), "10.0.0.1");
    EXPECT_EQ(f.address_of(1).to_string(), "192.168.1.7");
    EXPECT_EQ(f.host_by_address(*address::parse("10.0.0.1")), 0u);
    EXPECT_EQ(f.host_by_address(*address::parse("192.168.1.7")), 1u);
    EXPECT_FALSE(f.host_by_address(*address::parse("10.0.0.2")));
    EXPECT_EQ(default_host_address(255).to_string(), "10.0.1.0");
}

TEST(topology_model, errors_name_the_element)
{
    auto s = tiny();
    s.links[1].b = "nowhere";
    EXPECT_NE(error_of(s).find("link s - nowhere: unknown node 'nowhere'"), std::string::npos) << error_of(s);

    s = tiny();
    s.links[0].rate_gbps = 0;
    EXPECT_NE(error_of(s).find("link a - s: rate_gbps must be"), std::string::npos) << error_of(s);

    s = tiny();
    s.links[0].delay_ns = -1;
    EXPECT_NE(error_of(s).find("link a - s: delay_ns"), std::string::npos);

    s = tiny();
    s.links[0].weight = 0;
    EXPECT_NE(error_of(s).find("link a - s: weight"), std::string::npos);

    s = tiny();
    s.switches.push_back({"a", no_group, {}});
    EXPECT_NE(error_of(s).find("duplicate name 'a'"), std::string::npos) << error_of(s);

    s = tiny();
    s.hosts.push_back({"c", std::nullopt, no_group, {}});
    EXPECT_NE(error_of(s).find("host c has no links"), std::string::npos) << error_of(s);

    s = tiny();
    s.hosts.push_back({"c", std::nullopt, no_group, {}});
    s.hosts.push_back({"d", std::nullopt, no_group, {}});
    s.links.push_back({"c", "d", 100, 0, 1, {}});
    EXPECT_NE(error_of(s).find("host c is not connected to host a"), std::string::npos) << error_of(s);

    s = tiny();
    s.links.push_back({"s", "a", 100, 0, 1, {}});
    EXPECT_NE(error_of(s).find("link s - a: these nodes are already linked"), std::string::npos) << error_of(s);

    s = tiny();
    s.links.push_back({"s", "s", 100, 0, 1, {}});
    EXPECT_NE(error_of(s).find("link s - s: a link cannot connect a node to itself"), std::string::npos);

    s = tiny();
    s.hosts[1].address = address::parse("10.0.0.1");
    EXPECT_NE(error_of(s).find("host b: address 10.0.0.1 is already used by host a"), std::string::npos)
        << error_of(s);

    s = tiny();
    s.hosts[0].name = "bad name";
    EXPECT_NE(error_of(s).find("host 'bad name'"), std::string::npos) << error_of(s);

    EXPECT_NE(error_of(fabric_spec{}).find("no hosts"), std::string::npos);
}

TEST(topology_model, to_spec_round_trips)
{
    for (const auto& spec : {rail_spec({}), dragonfly_spec({}), fat_tree_spec({.k = 4}), tiny()}) {
        const fabric f(spec);
        EXPECT_EQ(fabric(f.to_spec()), f);
    }
}

TEST(topology_model, builder_arguments)
{
    const auto req = parse_builder_argument("leaf_spine:spines=3,uplink_rates_gbps=10/10/1,leaves=2");
    EXPECT_EQ(req.type, "leaf_spine");
    ASSERT_EQ(req.params.size(), 3u);
    EXPECT_EQ(req.params[1].values, (std::vector<std::string>{"10", "10", "1"}));
    const fabric f(build_spec(req));
    EXPECT_EQ(f.host_count(), 8u);
    EXPECT_EQ(f.switch_count(), 5u);

    auto message = [](const std::string& text) {
        try {
            build_spec(parse_builder_argument(text));
        } catch (const topology_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message("dragonfly:color=blue").find("unknown dragonfly parameter 'color' (known: groups,"),
              std::string::npos);
    EXPECT_NE(message("fat_tree:k=x").find("fat_tree parameter 'k': expected an integer >= 2, got 'x'"),
              std::string::npos);
    EXPECT_NE(message("rail:rail_rate_gbps=0").find("expected a rate in Gb/s > 0"), std::string::npos);
    EXPECT_NE(message("torus:n=4").find("unknown builder 'torus'"), std::string::npos);
    EXPECT_NE(message("rail:clusters").find("expected key=value"), std::string::npos);
}
