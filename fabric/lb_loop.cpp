// The baseline schemes' path choice (load_balancer.hpp): ECMP, LetFlow,
// CONGA and ConWeave at the source ToR, PLB's path at the host, ConWeave's
// reordering and CONGA's feedback at the destination ToR.
#include "fabric/simulation.hpp"

#include <algorithm>
#include <cmath>

namespace laps::fabric {

namespace {

std::uint64_t mix64(std::uint64_t x) noexcept
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

} // namespace

const candidate_set& simulation::candidates(topology::node_id src, topology::node_id dst)
{
    const std::size_t n = _hosts.size();
    auto& slot = _candidate_sets[src * n + dst];
    if (slot) {
        return *slot;
    }
    slot = std::make_unique<candidate_set>();
    const std::int32_t row = _pst_row[src * n + dst];
    if (row < 0) {
        return *slot; // no candidates: shortest path
    }
    if (_pit_row.empty()) {
        _pit_row.resize(n);
    }
    auto& pit_index = _pit_row[src];
    const auto& table = _hosts[src].table;
    if (pit_index.empty()) {
        std::uint32_t pids = 1;
        for (const auto& r : table.pit) {
            pids = std::max<std::uint32_t>(pids, r.pid + 1u);
        }
        pit_index.assign(pids, -1);
        for (std::size_t r = 0; r < table.pit.size(); ++r) {
            pit_index[table.pit[r].pid] = static_cast<std::int32_t>(r);
        }
    }
    time_ns slowest = 0;
    for (const auto pid : table.pst[static_cast<std::size_t>(row)].pids) {
        if (pid >= pit_index.size() || pit_index[pid] < 0) {
            continue;
        }
        const auto& r = table.pit[static_cast<std::size_t>(pit_index[pid])];
        if (!r.valid) {
            continue;
        }
        candidate c;
        c.pid = r.pid;
        c.hops = r.hop_count;
        c.anchor_count = r.anchor_count;
        std::uint64_t key = mix64((std::uint64_t{_tor[src]} << 32) | _tor[dst]);
        for (std::size_t a = 0; a < r.anchor_count; ++a) {
            c.anchors[a] = static_cast<topology::node_id>(r.anchors[a]);
            key = mix64(key ^ (r.anchors[a] + 0x9e3779b97f4a7c15ULL));
        }
        // ToR-level paths of two hosts under the same pair of ToRs share a key
        // when their anchors agree (dragonfly); a rail GPU is its own ToR.
        c.route = key;
        c.uncongested_ns = r.uncongested_ns;
        c.ports = route_ports(_tor[src], c, dst);
        slowest = std::max(slowest, static_cast<time_ns>(r.uncongested_ns));
        slot->paths.push_back(c);
    }
    slot->base_rtt_ns = 2 * slowest;
    return *slot;
}

std::vector<port_id> simulation::route_ports(topology::node_id from, const candidate& c, topology::node_id dst) const
{
    // The switches' forwarding of a packet with these anchors, walked from `from`.
    std::vector<port_id> out;
    std::size_t a = 0;
    topology::node_id at = from;
    for (int hop = 0; hop < 64 && at != dst; ++hop) {
        while (a < c.anchor_count && c.anchors[a] == at) {
            ++a;
        }
        const port_id p = _forwarding->toward(at, a < c.anchor_count ? c.anchors[a] : dst);
        if (p == no_port) {
            break;
        }
        out.push_back(p);
        at = _ports[p].to;
    }
    return out;
}

void simulation::lb_source_tor(std::uint32_t i, topology::node_id at)
{
    packet& k = _packets[i];
    k.routed = true;
    const auto& cs = candidates(k.src, k.dst);
    if (cs.paths.empty()) {
        return;
    }
    const auto n = static_cast<std::uint32_t>(cs.paths.size());
    std::uint16_t idx = 0;
    switch (_scenario.scheme) {
    case scheme::laps:
    case scheme::ecmp:
    case scheme::ecmp_noqp:
    case scheme::rps:
    case scheme::reps:
    case scheme::hopper:
    case scheme::flowbender:
    case scheme::selective:
        // The switch hashes the 5-tuple; RoCEv2's entropy is the UDP source
        // port: the QP's, or the one the host's policy chose for this packet.
        idx = static_cast<std::uint16_t>(mix32(k.hash ^ _nodes[at].ecmp_salt) % n);
        break;
    case scheme::telb:
        idx = telb_pick(k, n);
        break;
    case scheme::reunion:
        idx = reunion_source(k, at, cs);
        break;
    case scheme::plb:
        idx = k.pid < n ? k.pid : 0; // the host's choice (roce_loop.cpp)
        break;
    case scheme::letflow:
    case scheme::conga:
    case scheme::dlb:
    case scheme::glb: {
        // A new flowlet when the flow was idle longer than the timeout (LetFlow:
        // a random path; CONGA: the least congested one); otherwise the flowlet's.
        auto& fl = _flowlets[k.flow];
        if (!fl.seen || _now - fl.last > _scenario.roce.flowlet_timeout_ns) {
            ++_roce.flowlets;
            std::uint16_t next = 0;
            switch (_scenario.scheme) {
            case scheme::letflow:
                next = static_cast<std::uint16_t>(_lb_rng[at].below(n));
                break;
            case scheme::conga:
                next = conga_pick(at, cs, k.dst);
                break;
            default:
                next = quality_pick(at, cs, _scenario.scheme == scheme::glb);
                break;
            }
            if (fl.seen && next != fl.path) {
                ++_roce.path_changes;
            }
            fl.path = next;
            fl.seen = true;
        }
        fl.last = _now;
        idx = fl.path;
        break;
    }
    case scheme::conweave:
        idx = _tor[k.src] == _tor[k.dst] ? 0 : conweave_source(k, cs);
        break;
    }
    const auto& c = cs.paths[idx];
    k.pid = c.pid;
    k.anchor_count = c.anchor_count;
    k.anchor_index = 0;
    k.anchors = c.anchors;
    k.conga_route = c.route;
    k.conga_ce = 0;
    if (k.op == roce_op::data) {
        ++_nics[k.src].packets_per_pid[c.pid];
    }
}

bool simulation::lb_dest_tor(std::uint32_t i, topology::node_id at)
{
    packet& k = _packets[i];
    const topology::node_id src_leaf = _tor[k.src];
    if (src_leaf == at) {
        return false; // both hosts under one ToR: one path, nothing to do
    }
    if (!_conga.empty()) {
        // CONGA: remember the path's congestion, to be fed back to the source leaf.
        auto& fb = _conga[at].from_leaf[src_leaf];
        auto [it, fresh] = fb.slot.try_emplace(k.conga_route, static_cast<std::uint32_t>(fb.routes.size()));
        if (fresh) {
            fb.routes.push_back(k.conga_route);
            fb.metric.push_back(0);
            fb.changed.push_back(false);
        }
        fb.metric[it->second] = k.conga_ce;
        fb.changed[it->second] = true;
        return false;
    }
    if (!_cw_rx.empty()) {
        return conweave_dest(i, at);
    }
    if (!_reunion.flows.empty()) {
        reunion_dest(k, at);
    }
    return false;
}

void simulation::lb_on_ack(packet& k, topology::node_id at)
{
    if (_conga.empty()) {
        return;
    }
    // An ACK travels from the data's destination leaf to its source leaf:
    // CONGA piggybacks one congestion-from-leaf entry on it (round robin,
    // changed entries first) and the source leaf stores it (congestion-to-leaf).
    const topology::node_id data_dst_leaf = _tor[k.src];
    const topology::node_id data_src_leaf = _tor[k.dst];
    if (data_dst_leaf == data_src_leaf) {
        return;
    }
    if (at == data_dst_leaf && !k.conga_fb) {
        auto found = _conga[at].from_leaf.find(data_src_leaf);
        if (found != _conga[at].from_leaf.end() && !found->second.routes.empty()) {
            auto& fb = found->second;
            const std::size_t n = fb.routes.size();
            std::size_t pick = fb.rr % n;
            for (std::size_t j = 0; j < n; ++j) {
                const std::size_t c = (fb.rr + j) % n;
                if (fb.changed[c]) {
                    pick = c;
                    break;
                }
            }
            k.conga_fb = true;
            k.conga_fb_route = fb.routes[pick];
            k.conga_fb_metric = fb.metric[pick];
            fb.changed[pick] = false;
            fb.rr = pick + 1;
        }
    }
    if (at == data_src_leaf && k.conga_fb) {
        _conga[at].to_leaf[k.conga_fb_route] = conga_metric{k.conga_fb_metric, _now};
        k.conga_fb = false;
        ++_roce.conga_feedback;
    }
}

// --- CONGA ----------------------------------------------------------------------

void simulation::dre_add(port_id p, std::uint32_t bytes)
{
    if (_dre.empty()) {
        return;
    }
    dre_level(p); // decay first
    _dre[p].bytes += bytes;
}

std::uint8_t simulation::dre_level(port_id p)
{
    // X decays by (1 - alpha) every period (CONGA §3.5); the utilisation
    // X / (rate x period / alpha) is quantised to `quantize_bits`.
    const auto& cp = _scenario.roce.conga;
    auto& d = _dre[p];
    if (_now > d.period_start) {
        const time_ns periods = (_now - d.period_start) / cp.dre_period_ns;
        if (periods > 0) {
            d.bytes *= std::pow(1.0 - cp.dre_alpha, static_cast<double>(periods));
            d.period_start += periods * cp.dre_period_ns;
        }
    }
    const double capacity = _ports[p].rate_bps * (static_cast<double>(cp.dre_period_ns) / 1e9) / cp.dre_alpha;
    const double ratio = d.bytes * 8.0 / capacity;
    const double levels = std::ldexp(1.0, static_cast<int>(cp.quantize_bits));
    return static_cast<std::uint8_t>(std::min(levels - 1, std::floor(ratio * levels)));
}

std::uint16_t simulation::conga_pick(topology::node_id at, const candidate_set& cs, topology::node_id dst)
{
    // The path minimising max(local uplink DRE, congestion-to-leaf); ties at random.
    std::uint32_t best = 0x100;
    std::uint32_t ties = 0;
    std::uint16_t pick = 0;
    const auto& leaf = _conga[at];
    for (std::size_t j = 0; j < cs.paths.size(); ++j) {
        const auto& c = cs.paths[j];
        std::size_t a = 0;
        while (a < c.anchor_count && c.anchors[a] == at) {
            ++a;
        }
        // The ToR's uplink toward this path (its first hop from here).
        const topology::node_id target = a < c.anchor_count ? c.anchors[a] : dst;
        const port_id p = _forwarding->toward(at, target);
        const std::uint32_t local = p == no_port ? 0 : dre_level(p);
        std::uint32_t remote = 0;
        if (const auto it = leaf.to_leaf.find(c.route);
            it != leaf.to_leaf.end() && _now - it->second.at <= _scenario.roce.conga.aging_ns) {
            remote = it->second.value;
        }
        const std::uint32_t m = std::max(local, remote);
        if (m < best) {
            best = m;
            ties = 1;
            pick = static_cast<std::uint16_t>(j);
        } else if (m == best) {
            ++ties;
            if (_lb_rng[at].below(ties) == 0) {
                pick = static_cast<std::uint16_t>(j);
            }
        }
    }
    return pick;
}

// --- ConWeave -------------------------------------------------------------------

std::uint16_t simulation::conweave_source(packet& k, const candidate_set& cs)
{
    // conweave-routing.cc RouteInput, source ToR: a new epoch (RTT_REQUEST,
    // flag INIT) when the flow was idle past tx_expiry or the last epoch is
    // settled; if no RTT_REPLY came by base RTT + extra, the next packet is the
    // TAIL of the old path and the flow moves to a new path (phase 1).
    const auto& p = _scenario.roce.conweave;
    auto& tx = _cw_tx[k.flow];
    const topology::node_id tor = _tor[k.src];
    const bool fresh = !tx.init;
    tx.init = true;
    bool expired = false;
    bool stabilized = false;
    bool timeout = false;
    if (fresh || tx.active + p.tx_expiry_ns < _now) {
        expired = true;
        tx.stabilized = false;
    } else if (tx.stabilized) {
        stabilized = true;
        tx.stabilized = false;
    }
    tx.active = _now;
    if (expired || stabilized) {
        tx.reply_deadline = _now + cs.base_rtt_ns + p.extra_reply_deadline_ns;
    } else if (tx.reply_deadline < _now) {
        tx.reply_deadline = no_time;
        timeout = true;
    }
    if (expired || stabilized) {
        ++tx.epoch;
    }
    std::uint8_t phase = tx.phase;
    if (expired || stabilized) {
        tx.phase = 0;
        phase = 0;
    } else if (timeout) {
        tx.phase = 1;
        phase = 0;
    }
    // Path-aware choice: two random candidates, the first not paused by a NOTIFY.
    const auto n = static_cast<std::uint32_t>(cs.paths.size());
    const auto r1 = static_cast<std::uint16_t>(_lb_rng[tor].below(n));
    const auto r2 = static_cast<std::uint16_t>(_lb_rng[tor].below(n));
    const auto paused = [&](std::uint16_t j) {
        const auto it = _cw_paused.find(cs.paths[j].route);
        return it != _cw_paused.end() && it->second > _now;
    };
    bool found = true;
    std::uint16_t good = r1;
    if (paused(r1)) {
        if (!paused(r2)) {
            good = r2;
        } else {
            found = false;
        }
    }
    if (tx.path == no_pid) {
        tx.path = good;
    }
    std::uint16_t current = tx.path;
    if (expired) {
        if (found) {
            if (!fresh && good != tx.path) {
                ++_roce.path_changes;
            }
            tx.path = good;
        }
        current = tx.path;
    } else if (timeout) {
        current = tx.path; // the TAIL goes on the old path
        if (found) {
            if (good != tx.path) {
                ++_roce.path_changes;
            }
            ++_roce.cw_reroutes;
            tx.path = good;
        }
    }
    if (expired || stabilized) {
        tx.tail_ns = 0;
    } else if (timeout) {
        tx.tail_ns = _now;
    }
    k.cw_flag = (expired || stabilized) ? cw_init : timeout ? cw_tail : cw_data;
    k.cw_phase = phase;
    k.cw_epoch = tx.epoch;
    k.cw_tx_ns = _now;
    k.cw_tail_ns = tx.tail_ns;
    return current;
}

bool simulation::conweave_dest(std::uint32_t i, topology::node_id at)
{
    // conweave-routing.cc RouteInput, destination ToR: packets of the new path
    // (phase 1) that arrive before the old path's TAIL wait in a reorder queue
    // until the TAIL arrives or until the predicted time passes.
    const auto& p = _scenario.roce.conweave;
    packet& k = _packets[i];
    auto& rx = _cw_rx[k.flow];
    rx.init = true;
    rx.tor = at;
    int match = 0; // 0 current epoch, 1 new, 2 previous
    if (rx.epoch < k.cw_epoch) {
        rx.epoch = k.cw_epoch;
        match = 1;
    } else if (rx.epoch > k.cw_epoch) {
        match = 2;
    }
    if (match == 2) {
        return false;
    }
    if (k.cw_phase == 0) {
        rx.phase0_tx = k.cw_tx_ns;
        rx.phase0_rx = _now;
    }
    bool ooo = false;
    bool cache = false;
    if (match == 1) {
        rx.phase = k.cw_flag == cw_tail ? 1 : 0;
        ooo = k.cw_phase > rx.phase;
        rx.phase0_cache = k.cw_phase == 0;
        cache = rx.phase0_cache;
    } else {
        if (k.cw_flag == cw_tail) {
            if (!rx.reordering) {
                rx.phase = 1;
            }
        } else if (rx.phase < k.cw_phase) {
            ooo = true;
        }
        if (k.cw_phase == 0) {
            rx.phase0_cache = true;
        }
        cache = rx.phase0_cache;
    }
    if (k.cw_flag == cw_tail || k.cw_phase == 1) {
        rx.tail_ns = k.cw_tail_ns;
    }
    // When the TAIL should arrive: its send time minus the old path's last
    // send time after that packet's arrival, plus slack.
    const time_ns gap = cache ? std::max<time_ns>(0, rx.tail_ns - rx.phase0_tx) : p.default_voq_wait_ns;
    time_ns flush_at = 0;
    bool by_tail = false;
    if (k.cw_phase == 1) {
        if (ooo) {
            flush_at = (cache ? rx.phase0_rx : _now) + gap + p.extra_voq_flush_ns;
        }
    } else if (k.cw_flag == cw_tail) {
        flush_at = _now + 1;
        by_tail = true;
    } else {
        flush_at = _now + gap + p.extra_voq_flush_ns;
    }
    bool hold = false;
    if (k.cw_phase == 0) {
        if (rx.reordering) {
            ++rx.flush_gen;
            rx.flush_by_tail = by_tail;
            _events.push(std::max(_now, flush_at), event_kind::lb_timer, k.flow, rx.flush_gen);
        }
    } else if (ooo) {
        hold = true;
        if (!rx.reordering) {
            rx.reordering = true;
            ++rx.flush_gen;
            rx.flush_by_tail = false;
            _events.push(std::max(_now, flush_at), event_kind::lb_timer, k.flow, rx.flush_gen);
        }
    }
    const packet data = k; // the sends below may move the record
    if (data.ce) {
        conweave_send(roce_op::cw_notify, data, at, 0, 0); // the path saw ECN: pause it at the source
    }
    if (data.cw_flag == cw_init) {
        conweave_send(roce_op::cw_reply, data, at, cw_init, 0); // RTT_REPLY
    } else if (data.cw_flag == cw_tail) {
        conweave_send(roce_op::cw_reply, data, at, cw_tail, 1); // CLEAR
    }
    if (hold) {
        // The queue holds the packet in the ToR's shared buffer.
        auto& node = _nodes[at];
        node.buffered += data.bytes;
        node.max_buffered = std::max(node.max_buffered, node.buffered);
        rx.voq.push_back(i);
        ++_roce.cw_held;
        _roce.cw_held_max = std::max<std::uint64_t>(_roce.cw_held_max, rx.voq.size());
    }
    return hold;
}

void simulation::conweave_send(roce_op op, const packet& from, topology::node_id at, std::uint8_t flag,
                               std::uint8_t phase)
{
    const packet data = from; // alloc() below may move the record `from` refers to
    // ConWeave's control uses the (N)ACK class.
    const std::uint32_t i = roce_control(op, packet_class::plain, true, data.dst, _tor[data.src], data.flow);
    packet& c = _packets[i];
    c.cw_flag = flag;
    c.cw_phase = phase;
    c.cw_epoch = data.cw_epoch;
    c.conga_route = data.conga_route;
    if (op == roce_op::cw_reply) {
        ++_roce.cw_replies;
    } else {
        ++_roce.cw_notifies;
    }
    roce_forward(i, at);
}

void simulation::lb_control(std::uint32_t i, topology::node_id at)
{
    const packet k = _packets[i];
    _packets.release(i);
    if (k.op == roce_op::reunion_notify) {
        reunion_on_notify(k, at);
        return;
    }
    if (k.op == roce_op::cw_notify) {
        _cw_paused[k.conga_route] = _now + _scenario.roce.conweave.path_pause_ns;
        return;
    }
    auto& tx = _cw_tx[k.flow];
    if (k.cw_epoch != tx.epoch || k.cw_phase != tx.phase) {
        return;
    }
    if (k.cw_flag == cw_init) {
        if (_now < tx.reply_deadline && tx.reply_deadline != no_time) {
            tx.stabilized = true; // the path answered in time: keep it, start a new epoch
            tx.reply_deadline = no_time;
        }
    } else if (k.cw_flag == cw_tail) {
        tx.stabilized = true; // reordering of this reroute is over
        tx.reply_deadline = no_time;
    }
}

void simulation::on_lb_timer(std::uint32_t flow, std::uint32_t gen)
{
    auto& rx = _cw_rx[flow];
    if (gen != rx.flush_gen || !rx.reordering) {
        return;
    }
    conweave_flush(flow, rx.flush_by_tail);
}

void simulation::conweave_flush(std::uint32_t flow, bool by_tail)
{
    auto& rx = _cw_rx[flow];
    ++(by_tail ? _roce.cw_flush_by_tail : _roce.cw_flush_by_timer);
    rx.reordering = false;
    rx.phase = 1;
    std::deque<std::uint32_t> held;
    held.swap(rx.voq);
    for (const auto i : held) {
        packet& k = _packets[i];
        _nodes[rx.tor].buffered -= k.bytes;
        k.cw_released = true;
        roce_forward(i, rx.tor);
    }
}

} // namespace laps::fabric
