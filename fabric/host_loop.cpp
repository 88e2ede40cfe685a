// The hosts' side of the event loop: flows hand frames to their engine,
// engines' packets enter the fabric, delivered frames are counted.
#include "fabric/simulation.hpp"
#include "wire/mbuf_parse.hpp"

#include <rte_ip.h>
#include <rte_mbuf.h>

namespace laps::fabric {

namespace {

// Retry for a host that could not make a frame (pool empty) or whose engine
// had no flow slot: soon, but not at the same instant.
constexpr time_ns retry_ns = 2 * common::ns_per_us;

packet_class class_of(wire::packet_type t) noexcept
{
    switch (t) {
    case wire::packet_type::data:
        return packet_class::data;
    case wire::packet_type::ack:
        return packet_class::ack;
    case wire::packet_type::probe:
        return packet_class::probe;
    case wire::packet_type::probe_ack:
        return packet_class::probe_ack;
    }
    return packet_class::plain;
}

std::uint32_t be32(const std::uint8_t* p) noexcept
{
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

} // namespace

void simulation::on_flow_start()
{
    // Every flow due now; one service per host at the end.
    std::vector<topology::node_id> touched;
    while (_next_start < _flows.size() && _flows[_next_start].spec.start <= _now) {
        auto& f = _flows[_next_start];
        f.started = true;
        if (!_nics.empty()) {
            ++_next_start;
            roce_start(f); // a RoCE QP (roce_loop.cpp)
            continue;
        }
        auto& h = _hosts[f.spec.src];
        if (h.sending.empty()) {
            touched.push_back(h.id);
        }
        h.sending.push_back(f.id);
        ++_next_start;
    }
    for (const auto h : touched) {
        service(_hosts[h]);
    }
    if (_next_start < _flows.size()) {
        _events.push(_flows[_next_start].spec.start, event_kind::flow_start, 0);
    }
}

void simulation::on_host_wake(topology::node_id id, time_ns at)
{
    auto& h = _hosts[id];
    if (h.wake_at != at) {
        return; // superseded by an earlier wake
    }
    h.wake_at = no_wake;
    h.engine->poll(h.clock(_now));
    service(h);
}

void simulation::on_housekeeping(topology::node_id id)
{
    // Engines age idle flows only inside poll(); hosts with no timers would
    // otherwise keep dead receiver flows forever.
    auto& h = _hosts[id];
    h.engine->poll(h.clock(_now));
    service(h);
    _events.push(_now + _scenario.engine.housekeeping_ns, event_kind::housekeeping, id);
}

void simulation::service(host_nic& h)
{
    // Engine outputs out, new frames in, until nothing moves (bounded: every
    // round either sends frames the engine took or stops).
    for (int round = 0; round < 256; ++round) {
        const bool out = drain_to_fabric(h);
        const bool in = drain_to_host(h);
        const bool took = pump(h);
        if (!out && !in && !took) {
            break;
        }
    }
    schedule_wake(h);
}

void simulation::schedule_wake(host_nic& h, time_ns retry_at)
{
    const time_ns engine_next = h.engine->next_event(h.clock(_now));
    time_ns at = engine_next == std::numeric_limits<time_ns>::max()
                     ? no_wake
                     : h.virtual_time_of(engine_next, _now);
    at = std::min(at, retry_at);
    if (at == no_wake || at >= h.wake_at) {
        return;
    }
    h.wake_at = at;
    _events.push(at, event_kind::host_wake, h.id);
}

bool simulation::pump(host_nic& h)
{
    bool took = false;
    const std::uint32_t queue = _scenario.engine.flow_queue_packets;
    const std::uint32_t frame_bytes = _scenario.fabric.frame_bytes;
    const time_ns clock = h.clock(_now);
    std::size_t keep = 0;
    bool blocked = false;
    for (std::size_t n = 0; n < h.sending.size(); ++n) {
        auto& f = _flows[h.sending[n]];
        while (!blocked && f.next_frame < f.frames && f.in_engine < queue) {
            rte_mbuf* m = make_frame(_frame_pool.get(), f, f.next_frame, h.ipv4, _hosts[f.spec.dst].ipv4, frame_bytes);
            if (m == nullptr) {
                ++h.frame_pool_waits;
                blocked = true;
                schedule_wake(h, _now + retry_ns);
                break;
            }
            const std::uint64_t full_before = h.engine->counters().host_drop_flow_table_full;
            if (h.engine->from_host(&m, 1, clock) == 0) {
                rte_pktmbuf_free(m); // refused: offered again later
                break;
            }
            if (h.engine->counters().host_drop_flow_table_full != full_before) {
                // The engine freed it: no flow slot. Make it again later.
                ++h.flow_table_waits;
                blocked = true;
                schedule_wake(h, _now + retry_ns);
                break;
            }
            ++f.next_frame;
            ++f.in_engine;
            took = true;
        }
        if (f.next_frame < f.frames) {
            h.sending[keep++] = h.sending[n];
        }
    }
    h.sending.resize(keep);
    return took;
}

bool simulation::drain_to_fabric(host_nic& h)
{
    bool any = false;
    while (true) {
        const std::uint16_t n = h.engine->take_to_fabric(_burst.data(), static_cast<std::uint16_t>(_burst.size()));
        if (n == 0) {
            return any;
        }
        any = true;
        for (std::uint16_t i = 0; i < n; ++i) {
            inject(h, _burst[i]);
        }
    }
}

bool simulation::drain_to_host(host_nic& h)
{
    bool any = false;
    while (true) {
        const std::uint16_t n = h.engine->take_to_host(_burst.data(), static_cast<std::uint16_t>(_burst.size()));
        if (n == 0) {
            return any;
        }
        any = true;
        for (std::uint16_t i = 0; i < n; ++i) {
            rte_mbuf* m = _burst[i];
            const auto tag = read_tag(m, 0);
            rte_pktmbuf_free(m);
            if (!tag || tag->flow >= _flows.size()) {
                continue;
            }
            auto& f = _flows[tag->flow];
            if (tag->index >= f.frames || f.spec.dst != h.id) {
                continue;
            }
            frame_delivered(f, tag->index);
        }
    }
}

void simulation::inject(host_nic& h, rte_mbuf* m)
{
    const std::uint32_t i = _packets.alloc();
    packet& k = _packets[i];
    k.m = m;
    k.bytes = m->pkt_len;
    const auto r = wire::parse(m, h.engine->config().outer.udp_port, 0);
    if (r.ok()) {
        const auto& hdr = r.packet.header;
        k.cls = class_of(hdr.type);
        k.kind = carrier::laps;
        k.priority = r.packet.dscp() == wire::dscp_expedited;
        k.ect = r.packet.ecn() != wire::ecn_not_ect;
        k.anchor_count = hdr.anchor_count;
        k.anchor_index = hdr.anchor_index;
        for (std::size_t a = 0; a < hdr.anchor_count && a < k.anchors.size(); ++a) {
            k.anchors[a] = hdr.anchors[a];
        }
        const auto dst = _host_by_ip.find(r.packet.dst_ip);
        if (dst == _host_by_ip.end()) {
            drop(i, drop_reason::no_route);
            return;
        }
        k.dst = dst->second;
        if (k.cls == packet_class::data) {
            k.retransmit = hdr.has_flag(wire::flag_retransmit);
            if (const auto tag = read_tag(m, r.packet.inner_offset); tag && tag->flow < _flows.size()) {
                k.flow = tag->flow;
                auto& f = _flows[tag->flow];
                if (k.retransmit) {
                    ++f.resent;
                } else if (f.in_engine > 0) {
                    --f.in_engine; // left the engine's flow queue
                }
            }
        }
    } else {
        // Not LAPS (the engine passed it through): plain IPv4, ECMP by 5-tuple.
        std::uint8_t head[wire::outer_size];
        const auto* p = static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, 0, sizeof head, head));
        if (p == nullptr || p[12] != 0x08 || p[13] != 0x00) {
            drop(i, drop_reason::no_route);
            return;
        }
        const std::uint32_t src = be32(p + 26);
        const std::uint32_t dst_ip = be32(p + 30);
        const std::uint32_t ports = (p[23] == IPPROTO_UDP || p[23] == IPPROTO_TCP) ? be32(p + 34) : 0;
        k.hash = mix32(src ^ mix32(dst_ip ^ mix32(ports ^ p[23])));
        k.ect = (p[15] & 0x03) != 0;
        const auto dst = _host_by_ip.find(dst_ip);
        if (dst == _host_by_ip.end()) {
            drop(i, drop_reason::no_route);
            return;
        }
        k.dst = dst->second;
    }
    forward(i, h.id);
}

void simulation::deliver(std::uint32_t i, topology::node_id host)
{
    // Like a NIC: the receiver gets a linear copy in its own buffer; the
    // sender's chain (and its reference on the host frame) is freed.
    packet& k = _packets[i];
    rte_mbuf* copy = rte_pktmbuf_copy(k.m, _wire_pool.get(), 0, UINT32_MAX);
    if (copy == nullptr) {
        drop(i, drop_reason::no_mbuf);
        return;
    }
    rte_pktmbuf_free(k.m);
    _packets.release(i);
    auto& h = _hosts[host];
    h.engine->from_fabric(&copy, 1, h.clock(_now));
    service(h);
}

} // namespace laps::fabric
