// The engines' side of the event loop: flows hand frames to their engine,
// engines' packets enter the fabric, delivered frames are counted.
#include "fabric/frames.hpp"
#include "fabric/hosts/laps_hosts.hpp"
#include "wire/mbuf_parse.hpp"

#include <rte_ip.h>
#include <rte_mbuf.h>

namespace laps::fabric::hosts {

namespace {

// host_timer args.
constexpr std::uint32_t wake = 0;
constexpr std::uint32_t housekeeping = 1;
constexpr std::uint32_t receive = 2; // engine.rx_burst_us: a burst of arrivals is due

// Retry for a host that could not make a frame (pool empty) or whose engine
// had no flow slot: soon, but not at the same instant.
constexpr time_ns retry_ns = 2 * common::ns_per_us;

packet_class class_of(wire::packet_type t) noexcept
{
    switch (t) {
    case wire::packet_type::data:
        return packet_class::data;
    case wire::packet_type::ack:
    case wire::packet_type::ack_run:
    case wire::packet_type::credit:
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

void laps_hosts::start_flow(flow& f)
{
    auto& e = _hosts[f.spec.src];
    if (e.sending.empty()) {
        _touched.push_back(f.spec.src);
    }
    e.sending.push_back(f.id);
    e.may_offer = true;
}

void laps_hosts::flows_started()
{
    // One service per host that got flows.
    for (const auto h : _touched) {
        service(_hosts[h], _sim.hosts()[h]);
    }
    _touched.clear();
}

void laps_hosts::on_timer(const event& e)
{
    _sim.mempools().keep_ready();
    auto& eh = _hosts[e.target];
    const auto& h = _sim.hosts()[e.target];
    const time_ns now = _sim.now();
    if (e.arg == receive) {
        take_arrivals(eh, h);
        return;
    }
    if (e.arg == wake) {
        if (eh.wake_at != e.at) {
            return; // superseded by an earlier wake
        }
        eh.wake_at = no_wake;
        eh.engine->poll(h.clock(now));
        service(eh, h);
        return;
    }
    // Housekeeping: engines age idle flows only inside poll(); hosts with no
    // timers would otherwise keep dead receiver flows forever.
    eh.engine->poll(h.clock(now));
    service(eh, h);
    _sim.schedule().push(now + _sim.config().engine.housekeeping_ns, event_kind::host_timer, e.target, housekeeping);
}

void laps_hosts::start()
{
    for (const auto& h : _sim.hosts()) {
        if (_hosts[h.id].engine == nullptr) {
            continue;
        }
        _sim.schedule().push(_sim.config().engine.housekeeping_ns, event_kind::host_timer, h.id, housekeeping);
    }
}

void laps_hosts::service(engine_host& e, const host_info& h)
{
    // Engine outputs out, new frames in, until nothing moves (bounded: every
    // round either sends frames the engine took or stops).
    for (int round = 0; round < 256; ++round) {
        const bool out = drain_to_fabric(e, h);
        const bool in = drain_to_host(e, h);
        const bool took = pump(e, h);
        if (!out && !in && !took) {
            break;
        }
    }
    schedule_wake(e, h);
}

void laps_hosts::schedule_wake(engine_host& e, const host_info& h, time_ns retry_at)
{
    const time_ns now = _sim.now();
    const time_ns engine_next = e.engine->next_event(h.clock(now));
    time_ns at = engine_next == std::numeric_limits<time_ns>::max() ? no_wake : h.virtual_time_of(engine_next, now);
    at = std::min(at, retry_at);
    if (at == no_wake || at >= e.wake_at) {
        return;
    }
    e.wake_at = at;
    _sim.schedule().push(at, event_kind::host_timer, h.id, wake);
}

bool laps_hosts::pump(engine_host& e, const host_info& h)
{
    if (!e.may_offer) {
        return false; // every sending flow's queue in the engine is full
    }
    e.may_offer = false;
    bool took = false;
    const auto& s = _sim.config();
    const std::uint32_t queue = s.engine.flow_queue_packets;
    const std::uint32_t frame_bytes = s.fabric.frame_bytes;
    const time_ns now = _sim.now();
    const time_ns clock = h.clock(now);
    auto& flows = _sim.flows();
    const auto& hosts = _sim.hosts();
    std::size_t keep = 0;
    bool blocked = false;
    for (std::size_t n = 0; n < e.sending.size(); ++n) {
        _sim.mempools().keep_ready(); // a flow's queue of frames at most before the next check
        auto& f = flows[e.sending[n]];
        while (!blocked && f.next_frame < f.frames && f.in_engine < queue) {
            rte_mbuf* m = make_frame(_sim.mempools().frames.get(), f, f.next_frame, h.ipv4, hosts[f.spec.dst].ipv4,
                                     frame_bytes);
            if (m == nullptr) {
                ++e.frame_pool_waits;
                blocked = true;
                e.may_offer = true;
                schedule_wake(e, h, now + retry_ns);
                break;
            }
            const std::uint64_t full_before = e.engine->counters().host_drop_flow_table_full;
            if (e.engine->from_host(&m, 1, clock) == 0) {
                rte_pktmbuf_free(m); // refused: offered again later
                e.may_offer = true;
                break;
            }
            if (e.engine->counters().host_drop_flow_table_full != full_before) {
                // The engine freed it: no flow slot. Make it again later.
                ++e.flow_table_waits;
                blocked = true;
                e.may_offer = true;
                schedule_wake(e, h, now + retry_ns);
                break;
            }
            ++f.next_frame;
            ++f.in_engine;
            took = true;
        }
        if (f.next_frame < f.frames) {
            e.sending[keep++] = e.sending[n];
        }
    }
    e.sending.resize(keep);
    return took;
}

bool laps_hosts::drain_to_fabric(engine_host& e, const host_info& h)
{
    bool any = false;
    while (true) {
        const std::uint16_t n = e.engine->take_to_fabric(_burst.data(), static_cast<std::uint16_t>(_burst.size()));
        if (n == 0) {
            return any;
        }
        any = true;
        for (std::uint16_t i = 0; i < n; ++i) {
            inject(h, _burst[i]);
        }
    }
}

bool laps_hosts::drain_to_host(engine_host& e, const host_info& h)
{
    bool any = false;
    auto& flows = _sim.flows();
    while (true) {
        const std::uint16_t n = e.engine->take_to_host(_burst.data(), static_cast<std::uint16_t>(_burst.size()));
        if (n == 0) {
            return any;
        }
        any = true;
        for (std::uint16_t i = 0; i < n; ++i) {
            rte_mbuf* m = _burst[i];
            const auto tag = read_tag(m, 0);
            rte_pktmbuf_free(m);
            if (!tag || tag->flow >= flows.size()) {
                continue;
            }
            auto& f = flows[tag->flow];
            if (tag->index >= f.frames || f.spec.dst != h.id) {
                continue;
            }
            _sim.frame_delivered(f, tag->index);
        }
    }
}

void laps_hosts::inject(const host_info& h, rte_mbuf* m)
{
    auto& packets = _sim.packets();
    const std::uint32_t i = packets.alloc();
    packet& k = packets[i];
    k.m = m;
    k.bytes = m->pkt_len;
    const auto r = wire::parse(m, _hosts[h.id].engine->config().outer.udp_port, 0);
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
        const auto dst = host_of(r.packet.dst_ip);
        if (!dst) {
            _sim.drop(i, drop_reason::no_route);
            return;
        }
        k.dst = *dst;
        auto& flows = _sim.flows();
        if (k.cls == packet_class::data) {
            k.retransmit = hdr.has_flag(wire::flag_retransmit);
            if (const auto id = frame_flow(m, r.packet.inner_offset); id && *id < flows.size()) {
                k.flow = *id;
                auto& f = flows[*id];
                if (k.retransmit) {
                    ++f.resent;
                } else {
                    f.first_wire_bytes += k.bytes;
                    if (f.in_engine > 0) {
                        --f.in_engine; // left the engine's flow queue
                        if (f.next_frame < f.frames) {
                            _hosts[h.id].may_offer = true; // room for its next frame
                        }
                    }
                }
            }
        }
    } else {
        // Not LAPS (the engine passed it through): plain IPv4, ECMP by 5-tuple.
        std::uint8_t head[wire::outer_size];
        const auto* p = static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, 0, sizeof head, head));
        if (p == nullptr || p[12] != 0x08 || p[13] != 0x00) {
            _sim.drop(i, drop_reason::no_route);
            return;
        }
        const std::uint32_t src = be32(p + 26);
        const std::uint32_t dst_ip = be32(p + 30);
        const std::uint32_t ports = (p[23] == IPPROTO_UDP || p[23] == IPPROTO_TCP) ? be32(p + 34) : 0;
        k.hash = mix32(src ^ mix32(dst_ip ^ mix32(ports ^ p[23])));
        k.ect = (p[15] & 0x03) != 0;
        const auto dst = host_of(dst_ip);
        if (!dst) {
            _sim.drop(i, drop_reason::no_route);
            return;
        }
        k.dst = *dst;
    }
    _sim.forward(i, h.id);
}

std::optional<topology::node_id> laps_hosts::host_of(std::uint32_t ipv4) const noexcept
{
    if (_ips_in_order) {
        const std::uint32_t id = ipv4 - _first_ip;
        if (id < _hosts.size()) {
            return id;
        }
        return std::nullopt;
    }
    const auto it = _by_ip.find(ipv4);
    if (it == _by_ip.end()) {
        return std::nullopt;
    }
    return it->second;
}

void laps_hosts::deliver(std::uint32_t i, topology::node_id host)
{
    _sim.mempools().keep_ready();
    auto& e = _hosts[host];
    if (e.engine == nullptr) {
        _sim.drop(i, drop_reason::no_route); // a host with no flows: nothing of LAPS is for it
        return;
    }
    // Like a NIC: the receiver gets a linear copy in its own buffer (of the
    // bytes anything reads: receive_copy in fabric/frames.hpp); the
    // sender's chain (and its reference on the host frame it may resend) is
    // freed. A packet of one segment that only the fabric holds (an ACK, a
    // probe, its answer) is handed over as it is: a copy would be the same
    // bytes in another buffer.
    auto& packets = _sim.packets();
    packet& k = packets[i];
    rte_mbuf* copy = k.m;
    if (k.m->nb_segs != 1 || rte_mbuf_refcnt_read(k.m) != 1 || RTE_MBUF_CLONED(k.m)) {
        copy = receive_copy(k.m, _sim.mempools().wire.get());
        if (copy == nullptr) {
            _sim.drop(i, drop_reason::no_mbuf);
            return;
        }
        rte_pktmbuf_free(k.m);
    }
    // The port it came in through, as a NIC's receive names it (the index
    // of the link among the host's): a receiver paces credits per port.
    copy->port = 0;
    if (k.ingress < _sim.ports().size()) {
        const topology::link_id in_link = _sim.ports()[k.ingress].link;
        const auto links = _sim.topology().neighbours(host);
        for (std::size_t j = 0; j < links.size(); ++j) {
            if (links[j].link == in_link) {
                copy->port = static_cast<std::uint16_t>(j);
            }
        }
    }
    packets.release(i);
    const auto& h = _sim.hosts()[host];
    const time_ns burst = _sim.config().engine.rx_burst_ns;
    if (burst == 0) {
        e.engine->from_fabric(&copy, 1, h.clock(_sim.now()));
        service(e, h);
        return;
    }
    // A polling driver's receive burst: what arrives within rx_burst of the
    // first packet is taken together, each packet with its arrival time (a
    // NIC's receive timestamp).
    _rx_time->set(copy, h.clock(_sim.now()));
    e.arrived.push_back(copy);
    if (e.arrived.size() == 1) {
        _sim.schedule().push(_sim.now() + burst, event_kind::host_timer, host, receive);
    }
}

void laps_hosts::prefetch_delivery(topology::node_id host) const noexcept
{
    // The host's engine slot and its clock; on a fabric of a thousand hosts
    // both were a miss on most deliveries.
    __builtin_prefetch(&_hosts[host]);
    __builtin_prefetch(&_sim.hosts()[host]);
}

void laps_hosts::take_arrivals(engine_host& e, const host_info& h)
{
    const time_ns clock = h.clock(_sim.now());
    constexpr std::size_t max_burst = 64;
    for (std::size_t at = 0; at < e.arrived.size(); at += max_burst) {
        const auto n = static_cast<std::uint16_t>(std::min(max_burst, e.arrived.size() - at));
        e.engine->from_fabric(e.arrived.data() + at, n, clock);
    }
    e.arrived.clear();
    service(e, h);
}

} // namespace laps::fabric::hosts
