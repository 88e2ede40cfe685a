#pragma once
// The fabric model: hosts, switches and full-duplex links.
//
// `fabric_spec` is the plain description (names, optional attributes) that
// builders and the YAML reader produce; `fabric` is the validated, immutable
// graph built from it. Node ids are dense: hosts first in description order
// (host index == node id), then switches. Link ids follow description order.

#include "tables/address.hpp"
#include "topology/error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace laps::topology {

using node_id = std::uint32_t;
using link_id = std::uint32_t;

inline constexpr node_id no_node = 0xffffffffu;
inline constexpr std::int32_t no_group = -1;

// Which builder's structure the fabric has. The paper's path rules
// (candidates.hpp) need rail or dragonfly; everything else uses Yen.
enum class fabric_family { custom, rail, dragonfly, leaf_spine, fat_tree };

std::string_view to_string(fabric_family family) noexcept;
std::optional<fabric_family> parse_family(std::string_view text) noexcept;

enum class node_kind : std::uint8_t { host, switch_node };

struct host_spec {
    std::string name;
    std::optional<tables::address> address; // default: 10.0.0.0 + host index + 1
    // Cluster (rail) or group (dragonfly); no_group when not part of one.
    std::int32_t group = no_group;
    source_location where;
};

struct switch_spec {
    std::string name;
    std::int32_t group = no_group;
    source_location where;
};

struct link_spec {
    std::string a;
    std::string b;
    double rate_gbps = 0;
    std::int64_t delay_ns = 0; // propagation delay
    // Routing weight (like an IGP metric): best paths minimise the sum. 1 makes
    // the sum a hop count.
    std::uint32_t weight = 1;
    source_location where;
};

struct fabric_spec {
    fabric_family family = fabric_family::custom;
    std::vector<host_spec> hosts;
    std::vector<switch_spec> switches;
    std::vector<link_spec> links;
};

struct node {
    std::string name;
    node_kind kind = node_kind::host;
    std::int32_t group = no_group;

    bool operator==(const node&) const = default;
};

struct link {
    node_id a = no_node;
    node_id b = no_node;
    double rate_gbps = 0;
    std::int64_t delay_ns = 0;
    std::uint32_t weight = 1;

    node_id peer(node_id from) const noexcept { return from == a ? b : a; }
    bool operator==(const link&) const = default;
};

// One entry of a node's adjacency list.
struct adjacency {
    node_id peer = no_node;
    link_id link = 0;
};

// The default address of host `index`: 10.0.0.0 + index + 1 (host 0 = 10.0.0.1).
tables::address default_host_address(node_id index) noexcept;

class fabric {
public:
    // Validates `spec` and throws topology_error naming the first bad element:
    // duplicate name or address, link to an unknown node, self-loop, two links
    // between the same nodes, rate <= 0, negative delay, weight 0, a node with no links or
    // not connected to the first host.
    explicit fabric(const fabric_spec& spec);

    fabric_family family() const noexcept { return _family; }
    std::size_t host_count() const noexcept { return _host_count; }
    std::size_t switch_count() const noexcept { return _nodes.size() - _host_count; }
    std::size_t node_count() const noexcept { return _nodes.size(); }
    std::size_t link_count() const noexcept { return _links.size(); }

    bool is_host(node_id n) const noexcept { return n < _host_count; }
    const node& at(node_id n) const { return _nodes.at(n); }
    const std::string& name(node_id n) const { return _nodes.at(n).name; }
    std::span<const node> nodes() const noexcept { return _nodes; }

    const link& link_at(link_id l) const { return _links.at(l); }
    std::span<const link> links() const noexcept { return _links; }

    // Neighbours sorted by node id.
    std::span<const adjacency> neighbours(node_id n) const noexcept
    {
        return {_adjacency.data() + _adjacency_begin[n], _adjacency.data() + _adjacency_begin[n + 1]};
    }
    std::optional<link_id> link_between(node_id a, node_id b) const noexcept;

    std::optional<node_id> find(std::string_view name) const;

    // Host address <-> node id.
    const tables::address& address_of(node_id host) const { return _addresses.at(host); }
    std::optional<node_id> host_by_address(const tables::address& address) const;

    // The description this fabric was built from, normalised: every address
    // given, no source locations. fabric(to_spec()) == *this.
    fabric_spec to_spec() const;

    bool operator==(const fabric& other) const noexcept
    {
        return _family == other._family && _host_count == other._host_count && _nodes == other._nodes &&
               _links == other._links && _addresses == other._addresses;
    }

private:
    fabric_family _family;
    std::size_t _host_count = 0;
    std::vector<node> _nodes;
    std::vector<link> _links;
    std::vector<tables::address> _addresses; // per host
    std::vector<std::size_t> _adjacency_begin;
    std::vector<adjacency> _adjacency;
    std::unordered_map<std::string, node_id> _by_name;
    std::map<tables::address, node_id> _by_address;
};

} // namespace laps::topology
