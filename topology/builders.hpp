#pragma once
// Built-in fabric builders: rail-only, dragonfly, leaf-spine, fat-tree.
//
// Each builder has a typed parameter struct (defaults = the paper's fabrics)
// and can also be driven by key=value text, as on the laps-paths command line
// ("dragonfly:groups=9,hosts_per_switch=4") or by a YAML `builder:` map.
// Node names and id order are documented in docs/topology.md.

#include "topology/model.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace laps::topology {

// Rail-only (paper Fig. 1(c)): `clusters` HB domains of `gpus` GPUs. GPU g of
// every cluster links to rail switch g; all GPUs of a cluster link to the
// cluster's NVLink switch. Hosts are GPUs: cluster c, GPU g is host c*gpus+g.
struct rail_params {
    std::uint32_t clusters = 8;
    std::uint32_t gpus = 8;
    double rail_rate_gbps = 100;
    double nvlink_rate_gbps = 100; // the paper's evaluation: every link 100 Gb/s
    std::int64_t rail_delay_ns = 1000;
    std::int64_t nvlink_delay_ns = 1000;
};

// Dragonfly (paper Fig. 1(b)): `groups` groups of `switches_per_group`
// switches in a full mesh, `hosts_per_switch` hosts per switch, and
// `global_links` global links per switch. Global port p of group i
// (p = 0 .. switches_per_group*global_links-1, on switch p / global_links)
// leads to group (i + 1 + p mod (groups-1)) mod groups: the consecutive
// assignment. switches_per_group*global_links must be a multiple of groups-1;
// equal to it gives exactly one link between every pair of groups.
struct dragonfly_params {
    std::uint32_t groups = 9;
    std::uint32_t switches_per_group = 4;
    std::uint32_t hosts_per_switch = 4;
    std::uint32_t global_links = 2;
    double host_rate_gbps = 100;
    double local_rate_gbps = 100;
    double global_rate_gbps = 100;
    std::int64_t host_delay_ns = 1000;
    std::int64_t local_delay_ns = 1000;
    std::int64_t global_delay_ns = 1000;
    // Routing weight of global links. Above 2, a path with one global link
    // (at worst local-global-local, weight 2 + w) always beats a path with two
    // (2w): best paths are the dragonfly's minimal routes, as its switches
    // route, and a detour through another group is never mistaken for one.
    std::uint32_t global_weight = 3;
};

// Two-tier leaf-spine: every leaf links to every spine. `uplink_rates_gbps`
// (one per spine, empty = all `uplink_rate_gbps`) builds asymmetric fabrics
// such as 4 x 10G + 2 x 1G uplinks.
struct leaf_spine_params {
    std::uint32_t leaves = 4;
    std::uint32_t spines = 2;
    std::uint32_t hosts_per_leaf = 4;
    double host_rate_gbps = 100;
    double uplink_rate_gbps = 100;
    std::vector<double> uplink_rates_gbps;
    std::int64_t host_delay_ns = 1000;
    std::int64_t uplink_delay_ns = 1000;
};

// Three-tier k-ary fat-tree (Al-Fares et al.): k pods of k/2 edge and k/2
// aggregation switches, (k/2)^2 core switches, k^3/4 hosts. Core switch (a, j)
// links to aggregation switch a of every pod.
struct fat_tree_params {
    std::uint32_t k = 4;
    double rate_gbps = 100;
    std::int64_t delay_ns = 1000;
};

fabric_spec rail_spec(const rail_params& p);
fabric_spec dragonfly_spec(const dragonfly_params& p);
fabric_spec leaf_spine_spec(const leaf_spine_params& p);
fabric_spec fat_tree_spec(const fat_tree_params& p);

// A builder driven by text parameters. `values` holds one item for a scalar,
// several for a list (YAML sequence, or "a/b/c" on the command line).
struct builder_param {
    std::string key;
    std::vector<std::string> values;
    source_location where;
};

struct builder_request {
    std::string type; // rail | dragonfly | leaf_spine | fat_tree
    std::vector<builder_param> params;
    source_location where;
};

bool is_builder_name(std::string_view name) noexcept;

// "dragonfly" or "dragonfly:groups=9,hosts_per_switch=4"; lists as "10/10/1".
builder_request parse_builder_argument(std::string_view text);

// Throws topology_error for an unknown builder, an unknown key (listing the
// known ones) or a bad value, naming the key and its location.
fabric_spec build_spec(const builder_request& request);

} // namespace laps::topology
