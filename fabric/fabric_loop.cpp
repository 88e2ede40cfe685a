// The fabric: ports, links, PFC, ECN marking, and the forwarding of LAPS
// and plain packets (the RoCE model's: roce_switching.cpp).
#include "fabric/hosts/transport.hpp"
#include "fabric/schemes/scheme.hpp"
#include "fabric/simulation.hpp"
#include "wire/layout.hpp"
#include "wire/outer.hpp"

#include <rte_ip.h>
#include <rte_mbuf.h>

namespace laps::fabric {

namespace {

// CE-marks an ECT packet in place (outer TOS, then the header checksum). The
// first segment is the packet's own header mbuf: nobody else reads it.
void mark_ce(rte_mbuf* m) noexcept
{
    if (m->data_len < wire::outer_size) {
        return;
    }
    auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, wire::ether_size);
    ip->type_of_service = static_cast<std::uint8_t>(ip->type_of_service | wire::ecn_ce);
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
}

// A switch that reaches an anchor advances anchor_index in the header (byte
// 3 of the LAPS header, docs/wire-format.md §5).
void write_anchor_index(rte_mbuf* m, std::uint8_t index) noexcept
{
    constexpr std::size_t offset = wire::outer_off::laps + wire::laps_off::anchor_index;
    if (m->data_len > offset) {
        *rte_pktmbuf_mtod_offset(m, std::uint8_t*, offset) = index;
    }
}

constexpr std::uint8_t max_hops = 64;

} // namespace

// --- ports and links --------------------------------------------------------

void simulation::enqueue(std::uint32_t i, port_id p)
{
    auto& pt = _ports[p];
    auto& node = _nodes[pt.from];
    packet& k = _packets[i];
    if (!pt.up) {
        drop(i, drop_reason::link_down, p);
        return;
    }
    // With PFC the data class is lossless: backpressure instead of DropTail.
    // A host's own packets wait in its NIC without limit (the TX ring holds
    // its sender back); packets a host relays (a rail GPU between NVLink and
    // its NIC) get a switch port's buffer.
    const bool lossless = _scenario.fabric.pfc && !k.priority;
    const bool relayed = node.is_host && k.ingress != no_port;
    const std::uint64_t limit = relayed ? _scenario.fabric.port_queue_bytes : pt.queue.limit();
    if (!lossless && !pt.queue.fits(k.priority, k.bytes, pt.in_service_of(k.priority), limit)) {
        drop(i, drop_reason::queue_full, p);
        return;
    }
    if (!node.admits(k.bytes)) {
        drop(i, drop_reason::shared_buffer, p);
        return;
    }
    const auto threshold = _scenario.fabric.ecn_threshold_bytes;
    if (threshold != 0 && k.ect && !k.priority && pt.queue.low_bytes() >= threshold) {
        if (k.m != nullptr) {
            mark_ce(k.m);
        } else {
            k.ce = true;
        }
        ++pt.counters.ce_marked;
    }
    if (k.kind == carrier::roce && k.roce.op == roce_op::data && node.is_host && k.ingress == no_port) {
        k.nic_queued = true; // the NIC's TX scheduler counts its own queued packets
        ++node.nic_queued;
    }
    pt.account(_now);
    pt.queue.push(_packets, i);
    enter_node(i, p);
    pt.note_max();
    start_next(p);
}

void simulation::enter_node(std::uint32_t i, port_id p)
{
    const packet& k = _packets[i];
    auto& node = _nodes[_ports[p].from];
    node.buffered += k.bytes;
    node.max_buffered = std::max(node.max_buffered, node.buffered);
    if (_scenario.fabric.pfc && k.ingress != no_port && !k.priority) {
        auto& up = _ports[k.ingress];
        up.ingress_bytes += k.bytes;
        if (!up.pause_sent && up.ingress_bytes > _scenario.fabric.pfc_xoff_bytes) {
            up.pause_sent = true;
            _events.push(_now + up.delay_ns, event_kind::pfc, k.ingress, 1);
        }
    }
}

void simulation::leave_node(std::uint32_t i, port_id p)
{
    const packet& k = _packets[i];
    _nodes[_ports[p].from].buffered -= k.bytes;
    if (_scenario.fabric.pfc && k.ingress != no_port && !k.priority) {
        auto& up = _ports[k.ingress];
        up.ingress_bytes -= k.bytes;
        if (up.pause_sent && up.ingress_bytes <= _run.pfc_xon) {
            up.pause_sent = false;
            _events.push(_now + up.delay_ns, event_kind::pfc, k.ingress, 0);
        }
    }
}

void simulation::on_pfc(port_id p, bool pause)
{
    auto& pt = _ports[p];
    if (pause == pt.paused) {
        return;
    }
    pt.paused = pause;
    if (pause) {
        ++pt.counters.pauses;
        pt.paused_at = _now;
    } else {
        pt.counters.paused_ns += _now - pt.paused_at;
        start_next(p);
    }
}

void simulation::start_next(port_id p)
{
    auto& pt = _ports[p];
    if (pt.busy || pt.queue.empty() || !pt.up || (pt.paused && !pt.queue.has_high())) {
        return;
    }
    pt.account(_now);
    const std::uint32_t i = pt.paused ? pt.queue.pop_high(_packets) : pt.queue.pop(_packets);
    if (_packets[i].nic_queued) {
        _packets[i].nic_queued = false;
        --_nodes[pt.from].nic_queued;
    }
    red_mark(p, i);
    _balancer->on_dequeue(p, _packets[i].bytes);
    pt.busy = true;
    pt.in_service = i;
    pt.in_service_bytes = _packets[i].bytes;
    pt.in_service_priority = _packets[i].priority;
    const time_ns ser = common::serialization_ns(_packets[i].bytes, pt.rate_bps);
    pt.counters.busy_ns += ser;
    // A fabric's packets come in few sizes and its ports in few rates, so
    // serialisation times repeat: each gets a FIFO lane, as link delays do.
    _events.push_after(_now, ser, event_kind::tx_done, p);
}

void simulation::on_tx_done(port_id p)
{
    auto& pt = _ports[p];
    const std::uint32_t i = pt.in_service;
    packet& k = _packets[i];
    pt.account(_now);
    pt.busy = false;
    pt.in_service = no_packet;
    leave_node(i, p);

    if (!pt.up) {
        drop(i, drop_reason::link_down, p);
    } else {
        ++pt.counters.packets;
        pt.counters.bytes += k.bytes;
        if (k.cls == packet_class::data) {
            ++pt.counters.data_packets;
            pt.counters.data_bytes += k.bytes;
        }
        // Draws only where a probability is set: a lossy link does not shift
        // the random stream of any other.
        if (pt.blackhole) {
            drop(i, drop_reason::blackhole, p);
        } else if (pt.loss > 0 && pt.rng.unit() < pt.loss) {
            drop(i, drop_reason::random_loss, p);
        } else {
            if (pt.corruption > 0 && pt.rng.unit() < pt.corruption) {
                k.corrupted = true;
            }
            k.link_epoch = pt.epoch;
            _events.push_after(_now, pt.delay_ns, event_kind::arrival, i, p);
        }
    }
    start_next(p);
    if (_nodes[pt.from].is_host) {
        _transport->on_port_free(pt.from); // a NIC's TX scheduler may pull the next packet
    }
}

void simulation::on_arrival(std::uint32_t i, port_id p)
{
    const auto& pt = _ports[p];
    packet& k = _packets[i];
    if (k.link_epoch != pt.epoch) {
        drop(i, drop_reason::link_down, p); // the link was cut under it
        return;
    }
    if (k.corrupted) {
        ++_nodes[pt.to].fcs_errors;
        drop(i, drop_reason::fcs_error, p);
        return;
    }
    k.ingress = p;
    forward(i, pt.to);
}

void simulation::drop(std::uint32_t i, drop_reason why, port_id p)
{
    packet& k = _packets[i];
    if (k.nic_queued) {
        k.nic_queued = false;
        --_nodes[k.roce.src].nic_queued;
    }
    ++_drops[static_cast<std::size_t>(k.cls)][static_cast<std::size_t>(why)];
    if (p != no_port) {
        ++_ports[p].counters.drops[static_cast<std::size_t>(why)];
    }
    rte_pktmbuf_free(k.m);
    _packets.release(i);
}

void simulation::red_mark(port_id p, std::uint32_t i)
{
    // RED on dequeue (the artefacts' SwitchMmu::ShouldSendCN): the data queue
    // left behind decides; thresholds scale with the port's rate. A host's
    // own packets leaving its NIC are not marked; relayed ones are.
    packet& k = _packets[i];
    if (_red_rng.empty() || !k.ect || k.priority || k.ingress == no_port) {
        return;
    }
    auto& pt = _ports[p];
    const auto& fp = _scenario.fabric;
    const double scale = pt.rate_bps / 100e9;
    const double q = static_cast<double>(pt.queue.low_bytes());
    const double kmin = static_cast<double>(fp.red_kmin_bytes) * scale;
    const double kmax = static_cast<double>(fp.red_kmax_bytes) * scale;
    if (q <= kmin) {
        return;
    }
    if (q < kmax) {
        const double prob = fp.red_pmax * (q - kmin) / (kmax - kmin);
        if (_red_rng[p].unit() >= prob) {
            return;
        }
    }
    if (k.m != nullptr) {
        mark_ce(k.m);
    } else {
        k.ce = true;
    }
    ++pt.counters.ce_marked;
}

// --- forwarding -------------------------------------------------------------

void simulation::forward(std::uint32_t i, topology::node_id at)
{
    packet& k = _packets[i];
    if (k.kind == carrier::roce) {
        forward_roce(i, at);
        return;
    }
    if (++k.hops > max_hops) {
        drop(i, drop_reason::hop_limit);
        return;
    }
    port_id out = no_port;
    if (k.laps()) {
        if (const std::uint8_t reached = k.anchor_index_at(at); reached != k.anchor_index) {
            k.anchor_index = reached;
            write_anchor_index(k.m, k.anchor_index);
        }
        const topology::node_id target = k.target_at(at);
        if (target == at) {
            _transport->deliver(i, at);
            return;
        }
        if (target >= _nodes.size()) {
            drop(i, drop_reason::no_route);
            return;
        }
        out = _forwarding->toward(at, target);
    } else {
        if (at == k.dst) {
            _transport->deliver(i, at);
            return;
        }
        const std::uint32_t hash = mix32(k.hash ^ _nodes[at].ecmp_salt);
        out = _forwarding->ecmp(at, k.dst, hash, [this](port_id p) { return _ports[p].up; });
    }
    if (out == no_port) {
        drop(i, drop_reason::no_route);
        return;
    }
    enqueue(i, out);
}

} // namespace laps::fabric
