#include "topology/model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>

namespace laps::topology {

namespace {

constexpr std::string_view family_names[] = {"custom", "rail", "dragonfly", "leaf_spine", "fat_tree"};

std::string link_name(const link_spec& l)
{
    return "link " + l.a + " - " + l.b;
}

std::string node_label(const node& n)
{
    return (n.kind == node_kind::host ? "host " : "switch ") + n.name;
}

bool valid_name(const std::string& name)
{
    if (name.empty() || !(std::isalnum(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
}

} // namespace

std::string_view to_string(fabric_family family) noexcept
{
    return family_names[static_cast<std::size_t>(family)];
}

std::optional<fabric_family> parse_family(std::string_view text) noexcept
{
    for (std::size_t i = 0; i < std::size(family_names); ++i) {
        if (family_names[i] == text) {
            return static_cast<fabric_family>(i);
        }
    }
    return std::nullopt;
}

tables::address default_host_address(node_id index) noexcept
{
    return tables::address::ipv4(0x0a000000u + index + 1);
}

fabric::fabric(const fabric_spec& spec) : _family(spec.family)
{
    if (spec.hosts.empty()) {
        throw topology_error("the fabric has no hosts");
    }
    _host_count = spec.hosts.size();
    const std::size_t n = spec.hosts.size() + spec.switches.size();
    if (n >= no_node) {
        throw topology_error("too many nodes: " + std::to_string(n));
    }
    _nodes.reserve(n);
    _by_name.reserve(n);
    std::vector<const source_location*> where(n);

    auto add_node = [&](const std::string& name, node_kind kind, std::int32_t group, const source_location& loc) {
        const char* what = kind == node_kind::host ? "host" : "switch";
        if (!valid_name(name)) {
            throw topology_error(loc, std::string(what) + " '" + name +
                                          "': a name is letters, digits, '_', '-' and '.', starting with a letter, "
                                          "digit or '_'");
        }
        if (group < no_group) {
            throw topology_error(loc, std::string(what) + " " + name + ": group must be >= 0");
        }
        const auto id = static_cast<node_id>(_nodes.size());
        const auto [it, inserted] = _by_name.emplace(name, id);
        if (!inserted) {
            throw topology_error(loc, "duplicate name '" + name + "' (first defined " +
                                          (where[it->second]->line > 0 ? "at " + where[it->second]->prefix()
                                                                       : std::string("by the builder: ")) +
                                          node_label(_nodes[it->second]) + ")");
        }
        where[id] = &loc;
        _nodes.push_back(node{name, kind, group});
    };

    _addresses.reserve(_host_count);
    for (const auto& h : spec.hosts) {
        add_node(h.name, node_kind::host, h.group, h.where);
        const auto id = static_cast<node_id>(_nodes.size() - 1);
        const tables::address a = h.address ? *h.address : default_host_address(id);
        const auto [it, inserted] = _by_address.emplace(a, id);
        if (!inserted) {
            throw topology_error(h.where, "host " + h.name + ": address " + a.to_string() + " is already used by host " +
                                              _nodes[it->second].name);
        }
        _addresses.push_back(a);
    }
    for (const auto& s : spec.switches) {
        add_node(s.name, node_kind::switch_node, s.group, s.where);
    }

    // Links: resolve names, check values, reject self-loops and parallel links
    // (a path is a node sequence, so two links between the same nodes could
    // not be told apart).
    _links.reserve(spec.links.size());
    std::vector<std::size_t> degree(n, 0);
    for (const auto& l : spec.links) {
        const auto a = _by_name.find(l.a);
        const auto b = _by_name.find(l.b);
        if (a == _by_name.end() || b == _by_name.end()) {
            throw topology_error(l.where, link_name(l) + ": unknown node '" + (a == _by_name.end() ? l.a : l.b) + "'");
        }
        if (a->second == b->second) {
            throw topology_error(l.where, link_name(l) + ": a link cannot connect a node to itself");
        }
        if (!(l.rate_gbps > 0) || !std::isfinite(l.rate_gbps)) {
            throw topology_error(l.where, link_name(l) + ": rate_gbps must be a positive number of Gb/s");
        }
        if (l.delay_ns < 0) {
            throw topology_error(l.where, link_name(l) + ": delay_ns must be >= 0");
        }
        if (l.weight < 1 || l.weight > 1'000'000) {
            throw topology_error(l.where, link_name(l) + ": weight must be in [1, 1000000]");
        }
        _links.push_back(link{a->second, b->second, l.rate_gbps, l.delay_ns, l.weight});
        ++degree[a->second];
        ++degree[b->second];
    }

    // Adjacency in CSR form, each list sorted by peer id.
    _adjacency_begin.assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        _adjacency_begin[i + 1] = _adjacency_begin[i] + degree[i];
    }
    _adjacency.resize(_adjacency_begin[n]);
    std::vector<std::size_t> fill(_adjacency_begin.begin(), _adjacency_begin.end() - 1);
    for (link_id id = 0; id < _links.size(); ++id) {
        const auto& l = _links[id];
        _adjacency[fill[l.a]++] = adjacency{l.b, id};
        _adjacency[fill[l.b]++] = adjacency{l.a, id};
    }
    for (node_id i = 0; i < n; ++i) {
        auto begin = _adjacency.begin() + static_cast<std::ptrdiff_t>(_adjacency_begin[i]);
        auto end = _adjacency.begin() + static_cast<std::ptrdiff_t>(_adjacency_begin[i + 1]);
        std::sort(begin, end, [](const adjacency& x, const adjacency& y) { return x.peer < y.peer; });
        const auto dup = std::adjacent_find(begin, end,
                                            [](const adjacency& x, const adjacency& y) { return x.peer == y.peer; });
        if (dup != end) {
            const link_spec& second = spec.links[std::max(dup->link, (dup + 1)->link)];
            throw topology_error(second.where, link_name(second) + ": these nodes are already linked (by link " +
                                                   std::to_string(std::min(dup->link, (dup + 1)->link)) +
                                                   "); parallel links are not supported");
        }
    }

    // Every node must be reachable from host 0.
    for (node_id i = 0; i < n; ++i) {
        if (degree[i] == 0) {
            throw topology_error(*where[i], node_label(_nodes[i]) + " has no links");
        }
    }
    std::vector<bool> seen(n, false);
    std::deque<node_id> queue{0};
    seen[0] = true;
    while (!queue.empty()) {
        const node_id u = queue.front();
        queue.pop_front();
        for (const auto& adj : neighbours(u)) {
            if (!seen[adj.peer]) {
                seen[adj.peer] = true;
                queue.push_back(adj.peer);
            }
        }
    }
    for (node_id i = 0; i < n; ++i) {
        if (!seen[i]) {
            throw topology_error(*where[i], node_label(_nodes[i]) + " is not connected to host " + _nodes[0].name);
        }
    }
}

std::optional<link_id> fabric::link_between(node_id a, node_id b) const noexcept
{
    if (a >= _nodes.size() || b >= _nodes.size()) {
        return std::nullopt;
    }
    const auto adj = neighbours(a);
    const auto it =
        std::lower_bound(adj.begin(), adj.end(), b, [](const adjacency& x, node_id peer) { return x.peer < peer; });
    if (it == adj.end() || it->peer != b) {
        return std::nullopt;
    }
    return it->link;
}

std::optional<node_id> fabric::find(std::string_view name) const
{
    const auto it = _by_name.find(std::string(name));
    if (it == _by_name.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::optional<node_id> fabric::host_by_address(const tables::address& address) const
{
    const auto it = _by_address.find(address);
    if (it == _by_address.end()) {
        return std::nullopt;
    }
    return it->second;
}

fabric_spec fabric::to_spec() const
{
    fabric_spec spec;
    spec.family = _family;
    spec.hosts.reserve(_host_count);
    spec.switches.reserve(switch_count());
    for (node_id i = 0; i < _nodes.size(); ++i) {
        const auto& nd = _nodes[i];
        if (nd.kind == node_kind::host) {
            spec.hosts.push_back(host_spec{nd.name, _addresses[i], nd.group, {}});
        } else {
            spec.switches.push_back(switch_spec{nd.name, nd.group, {}});
        }
    }
    spec.links.reserve(_links.size());
    for (const auto& l : _links) {
        spec.links.push_back(link_spec{_nodes[l.a].name, _nodes[l.b].name, l.rate_gbps, l.delay_ns, l.weight, {}});
    }
    return spec;
}

} // namespace laps::topology
