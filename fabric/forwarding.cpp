#include "fabric/forwarding.hpp"

namespace laps::fabric {

namespace {
constexpr port_id unset_port = no_port - 1;
constexpr std::uint32_t unset_group = UINT32_MAX;
}

forwarding::forwarding(const topology::fabric& f, const topology::routing& r)
    : _fabric(f), _routing(r), _next(f.node_count()), _ecmp_rows(f.node_count())
{
}

port_id forwarding::port_to(topology::node_id at, topology::node_id peer) const
{
    const auto link = _fabric.link_between(at, peer);
    if (!link) {
        return no_port;
    }
    return port_of(*link, _fabric.link_at(*link).a != at);
}

port_id forwarding::toward(topology::node_id at, topology::node_id target)
{
    auto& row = _next[target];
    if (row.empty()) {
        row.assign(_fabric.node_count(), unset_port);
    }
    port_id& p = row[at];
    if (p == unset_port) {
        const topology::node_id hop = at == target ? topology::no_node : _routing.next_hop(at, target);
        p = hop == topology::no_node ? no_port : port_to(at, hop);
    }
    return p;
}

std::span<const port_id> forwarding::ecmp_group(topology::node_id at, topology::node_id dst)
{
    auto& row = _ecmp_rows[at];
    if (row.empty()) {
        row.assign(_fabric.node_count(), unset_group);
    }
    std::uint32_t& g = row[dst];
    if (g == unset_group) {
        std::vector<port_id> ports;
        for (const auto hop : _routing.ecmp_next_hops(at, dst)) {
            ports.push_back(port_to(at, hop));
        }
        const auto [it, fresh] = _group_ids.try_emplace(ports, static_cast<std::uint32_t>(_groups.size()));
        if (fresh) {
            _groups.push_back({static_cast<std::uint32_t>(_group_ports.size()), static_cast<std::uint32_t>(ports.size())});
            _group_ports.insert(_group_ports.end(), ports.begin(), ports.end());
        }
        g = it->second;
    }
    const group_span span = _groups[g];
    return {_group_ports.data() + span.offset, span.count};
}

} // namespace laps::fabric
