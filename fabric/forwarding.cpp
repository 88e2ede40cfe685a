#include "fabric/forwarding.hpp"

namespace laps::fabric {

namespace {
constexpr port_id unset_port = no_port - 1;
}

forwarding::forwarding(const topology::fabric& f, const topology::routing& r)
    : _fabric(f), _routing(r), _next(f.node_count())
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

port_id forwarding::ecmp(topology::node_id at, topology::node_id dst, std::uint32_t hash,
                         const std::function<bool(port_id)>& usable)
{
    auto [it, fresh] = _ecmp.try_emplace({at, dst});
    if (fresh) {
        for (const auto hop : _routing.ecmp_next_hops(at, dst)) {
            it->second.push_back(port_to(at, hop));
        }
    }
    // The (hash mod usable)-th usable member: a switch rebuilds its group
    // without the failed links, which may move other flows too.
    std::uint32_t n = 0;
    for (const port_id p : it->second) {
        n += usable(p) ? 1 : 0;
    }
    if (n == 0) {
        return no_port;
    }
    std::uint32_t pick = hash % n;
    for (const port_id p : it->second) {
        if (usable(p)) {
            if (pick == 0) {
                return p;
            }
            --pick;
        }
    }
    return no_port;
}

} // namespace laps::fabric
