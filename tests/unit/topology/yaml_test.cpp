// Topology files: builder form, explicit form, round trip, and errors that
// name the file, the line and the element.

#include "helpers.hpp"
#include "topology/builders.hpp"
#include "topology/yaml_io.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace laps::topology;
using laps::topology::test::source_path;

namespace {

std::string error_of(const std::string& yaml)
{
    try {
        parse_fabric(yaml, "bad.yaml");
    } catch (const topology_error& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST(topology_yaml, builders_round_trip_through_yaml)
{
    leaf_spine_params ls;
    ls.spines = 6;
    ls.uplink_rates_gbps = {10, 10, 10, 10, 1, 1};
    ls.host_rate_gbps = 2.5;
    rail_params rail;
    rail.nvlink_rate_gbps = 900;
    for (const auto& spec : {rail_spec(rail), dragonfly_spec({}), leaf_spine_spec(ls), fat_tree_spec({.k = 8})}) {
        const fabric built(spec);
        const std::string text = to_yaml(built);
        const fabric read = parse_fabric(text, "round_trip.yaml");
        EXPECT_EQ(read, built) << text.substr(0, 400);
        EXPECT_EQ(to_yaml(read), text);
    }
}

TEST(topology_yaml, builder_form_equals_builder)
{
    const fabric from_file = parse_fabric(R"(
version: 1
builder:
  type: dragonfly
  groups: 5
  switches_per_group: 2
  hosts_per_switch: 3
  global_links: 2
)");
    dragonfly_params p;
    p.groups = 5;
    p.switches_per_group = 2;
    p.hosts_per_switch = 3;
    p.global_links = 2;
    EXPECT_EQ(from_file, fabric(dragonfly_spec(p)));
}

TEST(topology_yaml, paper_files_match_the_builders)
{
    EXPECT_EQ(load_fabric(source_path("configs/topologies/rail.yaml")), fabric(rail_spec({})));
    EXPECT_EQ(load_fabric(source_path("configs/topologies/dragonfly.yaml")), fabric(dragonfly_spec({})));
    EXPECT_EQ(load_fabric(source_path("configs/topologies/fat_tree_k4.yaml")), fabric(fat_tree_spec({.k = 4})));
    const fabric ls = load_fabric(source_path("configs/topologies/leaf_spine_asymmetric.yaml"));
    EXPECT_EQ(ls.address_of(0).to_string(), "10.1.0.1");
    EXPECT_EQ(ls.link_at(*ls.link_between(*ls.find("leaf3"), *ls.find("spine3"))).delay_ns, 5000);
    EXPECT_EQ(ls.link_at(*ls.link_between(*ls.find("leaf3"), *ls.find("spine4"))).rate_gbps, 1.0);
    const fabric two = load_fabric(source_path("configs/topologies/two_paths.yaml"));
    EXPECT_EQ(two.host_count(), 2u);
    EXPECT_EQ(two.address_of(1).to_string(), "10.0.0.20");
}

TEST(topology_yaml, explicit_form)
{
    const fabric f = parse_fabric(R"(
version: 1
family: dragonfly
defaults: {rate_gbps: 25, delay_ns: 300}
hosts:
  - {name: h0, group: 0}
  - {name: h1, address: "fd00::1", group: 1}
switches:
  - {name: s0, group: 0}
  - {name: s1, group: 1}
links:
  - {a: h0, b: s0}
  - {a: s0, b: s1, rate_gbps: 400, delay_ns: 5000, weight: 3}
  - {a: s1, b: h1}
)");
    EXPECT_EQ(f.family(), fabric_family::dragonfly);
    EXPECT_EQ(f.address_of(1).to_string(), "fd00::1");
    EXPECT_EQ(f.at(1).group, 1);
    EXPECT_EQ(f.link_at(0).rate_gbps, 25.0);
    EXPECT_EQ(f.link_at(0).delay_ns, 300);
    EXPECT_EQ(f.link_at(1).weight, 3u);
    EXPECT_EQ(f.link_at(1).rate_gbps, 400.0);
    EXPECT_EQ(parse_fabric(to_yaml(f)), f);
}

TEST(topology_yaml, errors_name_file_line_and_element)
{
    // Dangling link (line 7).
    EXPECT_NE(error_of(R"(hosts: [h0, h1]
switches: [s0]
defaults: {rate_gbps: 100}
links:
  - {a: h0, b: s0}
  - {a: s0, b: h1}
  - {a: s0, b: s9}
)").find("bad.yaml:7: link s0 - s9: unknown node 's9'"),
              std::string::npos)
        << error_of("");

    // Zero rate.
    const std::string zero = error_of(R"(hosts: [h0, h1]
switches: [s0]
links:
  - {a: h0, b: s0, rate_gbps: 100}
  - {a: s0, b: h1, rate_gbps: 0}
)");
    EXPECT_NE(zero.find("bad.yaml:5: link s0 - h1: rate_gbps must be a positive number"), std::string::npos) << zero;

    // Disconnected host.
    const std::string lonely = error_of(R"(hosts: [h0, h1, h2]
switches: [s0]
defaults: {rate_gbps: 100}
links:
  - {a: h0, b: s0}
  - {a: s0, b: h1}
)");
    EXPECT_NE(lonely.find("bad.yaml:1: host h2 has no links"), std::string::npos) << lonely;

    // Duplicate name, pointing at both definitions.
    const std::string dup = error_of(R"(hosts:
  - h0
  - h1
switches:
  - s0
  - h1
links: []
)");
    EXPECT_NE(dup.find("bad.yaml:6: duplicate name 'h1' (first defined at bad.yaml:3: host h1)"), std::string::npos)
        << dup;

    // Unknown keys, at every level.
    const std::string top = error_of("hosts: [h0]\nlinks: []\nswitchs: [s0]\n");
    EXPECT_NE(top.find("bad.yaml:3: topology: unknown key 'switchs'"), std::string::npos) << top;
    const std::string in_link = error_of(R"(hosts: [h0, h1]
links:
  - {a: h0, b: h1, rate_gbps: 1, latency: 5}
)");
    EXPECT_NE(in_link.find("bad.yaml:3: link 0: unknown key 'latency' (expected: a, b, rate_gbps, delay_ns, weight)"),
              std::string::npos)
        << in_link;
    const std::string in_builder = error_of("builder: {type: fat_tree, k: 4, pods: 2}\n");
    EXPECT_NE(in_builder.find("bad.yaml:1: unknown fat_tree parameter 'pods'"), std::string::npos) << in_builder;

    // Bad values.
    EXPECT_NE(error_of("builder:\n  type: rail\n  gpus: eight\n").find("bad.yaml:3: rail parameter 'gpus'"),
              std::string::npos);
    EXPECT_NE(error_of("hosts: [{name: h0, address: 10.0.0.300}]\nlinks: []\n").find("bad.yaml:1: host h0 address"),
              std::string::npos);
    EXPECT_NE(error_of("hosts: [h0]\nlinks: [{a: h0, b: h0}]\n").find("'rate_gbps' is required"), std::string::npos);
    EXPECT_NE(error_of("version: 2\nhosts: [h0]\nlinks: []\n").find("bad.yaml:1: version"), std::string::npos);

    // Overrides must name what the builder made.
    const std::string over = error_of(R"(builder: {type: fat_tree, k: 2}
overrides:
  links:
    - {a: h0_0_0, b: core0_0, rate_gbps: 1}
)");
    EXPECT_NE(over.find("bad.yaml:4: overrides.links: the builder made no link h0_0_0 - core0_0"), std::string::npos)
        << over;
    EXPECT_NE(error_of("builder: {type: fat_tree}\nhosts: [x]\n").find("'hosts' cannot be combined with 'builder'"),
              std::string::npos);

    // YAML syntax.
    EXPECT_NE(error_of("hosts: [h0\nlinks: []\n").find("bad.yaml:"), std::string::npos);
}

TEST(topology_yaml, files_and_arguments)
{
    try {
        load_fabric("/nonexistent/topology.yaml");
        FAIL();
    } catch (const topology_error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot open topology file '/nonexistent/topology.yaml'"),
                  std::string::npos);
    }
    // A real file: errors carry its path.
    const std::string path = testing::TempDir() + "topology_yaml_test.yaml";
    {
        std::ofstream out(path);
        out << "builder:\n  type: leaf_spine\n  spines: 2\n  uplink_rates_gbps: [10, 0]\n";
    }
    try {
        load_fabric(path);
        FAIL();
    } catch (const topology_error& e) {
        EXPECT_NE(std::string(e.what()).find(path + ":4: leaf_spine parameter 'uplink_rates_gbps'"), std::string::npos)
            << e.what();
    }
    std::remove(path.c_str());

    EXPECT_EQ(open_topology("fat_tree:k=4"), fabric(fat_tree_spec({.k = 4})));
    EXPECT_EQ(open_topology(source_path("configs/topologies/rail.yaml")), fabric(rail_spec({})));
    EXPECT_THROW(open_topology("no/such/file.yaml"), topology_error);
    EXPECT_THROW(open_topology("fat_tree:k=5"), topology_error);
}

// A topology file is read only up to its limit, and a NUL
// byte is an error before parsing.
TEST(topology_yaml, oversized_and_binary_files_are_refused_with_their_name)
{
    try {
        load_fabric("/dev/zero");
        FAIL() << "/dev/zero was taken for a topology";
    } catch (const topology_error& e) {
        EXPECT_NE(std::string(e.what()).find("'/dev/zero' is larger than 64 MiB"), std::string::npos) << e.what();
    }
    const std::string path = ::testing::TempDir() + "topology_nul.yaml";
    {
        std::ofstream out(path, std::ios::binary);
        out.write("version: 1\nfamily: \"ra\0il\"\n", 28);
    }
    try {
        load_fabric(path);
        FAIL() << "a NUL byte was accepted";
    } catch (const topology_error& e) {
        EXPECT_NE(std::string(e.what()).find("NUL byte"), std::string::npos) << e.what();
    }
    std::remove(path.c_str());
}
