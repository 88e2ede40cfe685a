// How the switches forward the RoCE NIC model's packets (fabric/hosts/):
// DATA and probes get a path from the scheme at their source ToR and follow
// its anchors, as LAPS packets do; ACKs, NACKs and probe answers go by flow
// ECMP over shortest paths (the artefacts' behaviour); a scheme's own
// control messages go by the shortest path to their switch. The scheme sees
// every step it asks for (fabric/schemes/scheme.hpp).
#include "fabric/hosts/roce_hosts.hpp"
#include "fabric/hosts/transport.hpp"
#include "fabric/schemes/scheme.hpp"
#include "fabric/simulation.hpp"

#include <algorithm>

namespace laps::fabric {

namespace {

constexpr std::uint8_t max_hops = 64;

} // namespace

void simulation::route_at_source_tor(std::uint32_t i, topology::node_id at)
{
    packet& k = _packets[i];
    k.roce.routed = true;
    const auto& cs = k.roce.op == roce_op::data && k.flow != no_flow ? _candidates->of_flow(k.flow, k.roce.src, k.dst)
                                                                     : _candidates->of(k.roce.src, k.dst);
    if (cs.paths.empty()) {
        return; // no candidates: the shortest path
    }
    const auto& c = cs.paths[_balancer->choose_path(k, at, cs)];
    k.roce.pid = c.pid;
    k.anchor_count = c.anchor_count;
    k.anchor_index = 0;
    k.anchors = c.anchors;
    k.roce.route = c.route;
    if (k.roce.op == roce_op::data) {
        _roce->count_sent(k.roce.src, c.pid);
    }
}

void simulation::forward_roce(std::uint32_t i, topology::node_id at)
{
    if (++_packets[i].hops > max_hops) {
        drop(i, drop_reason::hop_limit);
        return;
    }
    port_id out = no_port;
    switch (_packets[i].roce.op) {
    case roce_op::data:
    case roce_op::probe: { // a probe takes the path its entropy hashes to, like DATA
        const packet& first = _packets[i];
        const topology::node_id src_tor = _candidates->tor_of(first.roce.src);
        if (!first.roce.routed && at == src_tor) {
            route_at_source_tor(i, at);
        }
        // Both hosts under one ToR: one path, nothing for the scheme to do there.
        if (first.roce.op == roce_op::data && at == _candidates->tor_of(first.dst) && at != src_tor &&
            _balancer->at_destination_tor(i, at)) {
            return; // held by the scheme
        }
        packet& k = _packets[i]; // the scheme may have added records
        if (at == k.dst) {
            _transport->deliver(i, at);
            return;
        }
        while (k.anchor_index < k.anchor_count && k.anchors[k.anchor_index] == at) {
            ++k.anchor_index;
        }
        const topology::node_id target = k.anchor_index < k.anchor_count ? k.anchors[k.anchor_index] : k.dst;
        out = _forwarding->toward(at, target);
        if (out != no_port) {
            _balancer->on_hop(k, out);
        }
        break;
    }
    case roce_op::ack:
    case roce_op::nack:
    case roce_op::probe_reply: {
        packet& k = _packets[i];
        _balancer->on_reverse(k, at);
        if (at == k.dst) {
            _transport->deliver(i, at);
            return;
        }
        out = _forwarding->ecmp(at, k.dst, mix32(k.hash ^ _nodes[at].ecmp_salt),
                                [this](port_id p) { return _ports[p].up; });
        break;
    }
    case roce_op::switch_control:
        if (at == _packets[i].dst) {
            const packet k = _packets[i];
            _packets.release(i);
            _balancer->on_control(k, at);
            return;
        }
        out = _forwarding->toward(at, _packets[i].dst);
        break;
    }
    if (out == no_port) {
        drop(i, drop_reason::no_route);
        return;
    }
    enqueue(i, out);
}

} // namespace laps::fabric
