// The RoCEv2 NIC model's side of the event loop (roce_nic.hpp): QPs start,
// the NIC pulls packets from them, receivers acknowledge, DCQCN or DCTCP
// adjusts rates, Go-Back-N or IRN recovers losses.
#include "fabric/flow_generator.hpp"
#include "fabric/simulation.hpp"

#include <algorithm>
#include <cmath>

namespace laps::fabric {

namespace {

constexpr std::uint8_t max_hops = 64;

void set_bit(std::vector<std::uint64_t>& bits, std::uint32_t i) noexcept
{
    bits[i / 64] |= std::uint64_t{1} << (i % 64);
}

bool get_bit(const std::vector<std::uint64_t>& bits, std::uint32_t i) noexcept
{
    return (bits[i / 64] >> (i % 64) & 1u) != 0;
}

} // namespace

void simulation::roce_setup()
{
    const auto& f = *_scenario.topology;
    const std::size_t n = f.host_count();
    _nics.resize(n);
    _qps.resize(_flows.size());
    _rxs.resize(_flows.size());
    // A host's ToR: its switch when it has one link, itself when it has several
    // (a rail GPU's NIC reaches NVLink and rail directly).
    _tor.resize(n);
    for (std::size_t h = 0; h < n; ++h) {
        const auto nb = f.neighbours(static_cast<topology::node_id>(h));
        _tor[h] = nb.size() == 1 && !f.is_host(nb[0].peer) ? nb[0].peer : static_cast<topology::node_id>(h);
    }
    _pst_row.assign(n * n, -1);
    for (std::size_t h = 0; h < n; ++h) {
        const auto& pst = _hosts[h].table.pst;
        for (std::size_t r = 0; r < pst.size(); ++r) {
            if (const auto dst = f.host_by_address(pst[r].destination)) {
                _pst_row[h * n + *dst] = static_cast<std::int32_t>(r);
            }
        }
        std::uint32_t pids = 1;
        for (const auto& row : _hosts[h].table.pit) {
            pids = std::max<std::uint32_t>(pids, row.pid + 1u);
        }
        _nics[h].packets_per_pid.assign(pids, 0);
    }
    _candidate_sets.resize(n * n);
    _lb_rng.reserve(f.node_count());
    for (topology::node_id v = 0; v < f.node_count(); ++v) {
        _lb_rng.emplace_back(stream_seed(_seed, streams::lb, v));
    }
    const auto s = _scenario.scheme;
    if (s == scheme::letflow || s == scheme::conga || s == scheme::dlb || s == scheme::glb) {
        _flowlets.resize(_flows.size());
    }
    if (s == scheme::conga) {
        _conga.resize(f.node_count());
    }
    if (s == scheme::conga || s == scheme::dlb || s == scheme::glb) {
        _dre.resize(_ports.size());
    }
    if (s == scheme::glb) {
        _glb_quality.assign(_ports.size(), 0);
        _events.push(_scenario.roce.dlb.heartbeat_ns, event_kind::lb_tick, 0, lb_tick_glb);
    }
    if (s == scheme::reunion) {
        reunion_setup();
    }
    if (s == scheme::conweave) {
        _cw_tx.resize(_flows.size());
        _cw_rx.resize(_flows.size());
    }
}

const std::vector<std::uint64_t>& simulation::packets_per_path(topology::node_id h) const
{
    const auto& host = _hosts.at(h);
    if (host.engine) {
        return host.engine->packets_per_path();
    }
    return _nics.at(h).packets_per_pid;
}

void simulation::frame_delivered(flow& f, std::uint32_t index)
{
    auto& word = f.seen[index / 64];
    const std::uint64_t bit = std::uint64_t{1} << (index % 64);
    if ((word & bit) != 0) {
        ++f.duplicates;
        return;
    }
    word |= bit;
    ++f.delivered_frames;
    const std::uint32_t payload = frame_payload(f.spec.bytes, _scenario.fabric.frame_bytes, index);
    f.delivered_bytes += payload;
    _bytes_delivered += payload;
    if (f.delivered_frames == f.frames) {
        f.end = _now;
        ++_completed;
        _last_completion = _now;
    }
}

// --- sender -----------------------------------------------------------------

void simulation::roce_start(flow& f)
{
    auto& q = _qps[f.id];
    const auto& h = _hosts[f.spec.src];
    const auto& p = _scenario.roce;
    q.active = true;
    q.frames = f.frames;
    q.line_bps = h.rate_bps;
    // RoCEv2 puts QP entropy in the UDP source port (0xC000 | hash of the QPN);
    // without it (ecmp_noqp) every QP uses the RoCEv2 port.
    q.entropy = static_cast<std::uint16_t>(mix32(f.id * 0x9e3779b1u + 1) & 0x3fffu);
    q.sport = _scenario.scheme == scheme::ecmp_noqp ? roce_udp_port
                                                   : static_cast<std::uint16_t>(0xc000u | q.entropy);
    q.hash = roce_hash(f.spec.src, f.spec.dst, q.sport);
    q.dctcp = info(_scenario.scheme).hosts == transport::roce_dctcp;
    if (q.dctcp) {
        q.dctcp_state = dctcp_cc(p.dctcp, q.line_bps);
    } else {
        q.dcqcn = dcqcn_rp(p.dcqcn, q.line_bps);
    }
    const bool window = p.window == window_mode::bdp || (p.window == window_mode::automatic && q.dctcp);
    const auto& cs = candidates(f.spec.src, f.spec.dst);
    const std::uint32_t packet_bytes = payload_per_frame(_scenario.fabric.frame_bytes) + roce_data_overhead;
    if (window) {
        // One BDP: the slowest candidate's round trip at the line rate.
        const double bdp = q.line_bps * static_cast<double>(cs.base_rtt_ns) / 8e9;
        q.window_packets = std::max<std::uint64_t>(2, static_cast<std::uint64_t>(std::ceil(bdp / packet_bytes)));
    }
    if (p.recovery == loss_recovery::irn) {
        q.sacked.assign((f.frames + 63) / 64, 0);
        _rxs[f.id].received.assign((f.frames + 63) / 64, 0);
    }
    if (_scenario.scheme == scheme::plb && !cs.paths.empty()) {
        q.pid = static_cast<std::uint16_t>(mix32(q.hash ^ _nodes[_tor[f.spec.src]].ecmp_salt) % cs.paths.size());
    }
    host_policy_start(f, q, cs);
    q.next_avail = _now;
    _nics[f.spec.src].active.push_back(f.id);
    roce_pump(f.spec.src);
}

bool simulation::roce_next_psn(roce_qp& q, std::uint32_t& psn) const
{
    if (q.finished()) {
        return false;
    }
    const bool irn = _scenario.roce.recovery == loss_recovery::irn;
    if (irn && q.recovery) {
        // IRN resends a PSN only when a later one was SACKed (or after an RTO).
        const std::uint32_t end = std::min(q.recovery_end, q.high_sack);
        std::uint32_t p = std::max(q.retx_next, q.snd_una);
        while (p < end && q.is_sacked(p)) {
            ++p;
        }
        q.retx_next = p;
        if (p < end) {
            psn = p;
            return true;
        }
    }
    if (q.snd_nxt >= q.frames) {
        return false;
    }
    std::uint64_t limit = q.window_packets;
    if (irn) {
        const std::uint32_t packet_bytes = payload_per_frame(_scenario.fabric.frame_bytes) + roce_data_overhead;
        const std::uint64_t bdp = std::max<std::uint64_t>(1, _scenario.roce.irn_bdp_bytes / packet_bytes);
        limit = limit == 0 ? bdp : std::min(limit, bdp);
    }
    if (limit != 0) {
        // DCTCP's window shrinks with its rate (the artefact's VAR_WIN).
        double w = static_cast<double>(limit);
        if (q.dctcp) {
            w = std::max(1.0, std::floor(w * q.rate_bps() / q.line_bps));
        }
        if (static_cast<double>(q.snd_nxt - q.snd_una) >= w) {
            return false;
        }
    }
    psn = q.snd_nxt;
    return true;
}

void simulation::roce_pump(topology::node_id h)
{
    auto& nic = _nics[h];
    const auto ports = static_cast<std::uint32_t>(_nodes[h].ports.size());
    const std::uint32_t room = ports * _scenario.roce.nic_queue_packets;
    time_ns earliest = no_time;
    while (nic.own_queued < room && !nic.active.empty()) {
        bool sent = false;
        const std::size_t n = nic.active.size();
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t idx = (nic.rr + k) % n;
            const std::uint32_t fid = nic.active[idx];
            auto& q = _qps[fid];
            std::uint32_t psn = 0;
            if (!roce_next_psn(q, psn)) {
                continue;
            }
            if (q.next_avail > _now) {
                earliest = std::min(earliest, q.next_avail);
                continue;
            }
            nic.rr = idx + 1;
            roce_emit(fid, psn);
            sent = true;
            break;
        }
        if (!sent) {
            break;
        }
    }
    if (earliest != no_time && (nic.wake_at == no_time || earliest < nic.wake_at || nic.wake_at <= _now)) {
        nic.wake_at = earliest;
        _events.push(earliest, event_kind::nic_wake, h);
    }
}

void simulation::on_nic_wake(topology::node_id h, time_ns at)
{
    auto& nic = _nics[h];
    if (nic.wake_at != at) {
        return; // superseded
    }
    nic.wake_at = no_time;
    roce_pump(h);
}

void simulation::roce_emit(std::uint32_t fid, std::uint32_t psn)
{
    auto& q = _qps[fid];
    auto& f = _flows[fid];
    const std::uint32_t i = _packets.alloc();
    packet& k = _packets[i];
    k.kind = carrier::roce;
    k.cls = packet_class::data;
    k.op = roce_op::data;
    k.bytes = frame_payload(f.spec.bytes, _scenario.fabric.frame_bytes, psn) + roce_data_overhead;
    k.src = f.spec.src;
    k.dst = f.spec.dst;
    k.flow = fid;
    k.psn = psn;
    k.ect = true;
    k.hash = q.hash;
    k.sent_ns = _now;
    if (_scenario.scheme == scheme::plb) {
        k.pid = q.pid; // PLB: the host's choice (an index into the candidates until routed)
    }
    host_policy_entropy(f, q, k);
    ++_roce.data_sent;
    if (psn < q.max_sent) {
        ++_roce.data_resent;
        k.retransmit = true;
        ++f.resent;
        if (q.first_resend == 0xffffffffu) {
            q.first_resend = psn;
        }
    } else {
        q.max_sent = psn + 1;
    }
    if (q.recovery && psn < q.recovery_end) {
        q.retx_next = psn + 1;
    } else {
        q.snd_nxt = psn + 1;
    }
    q.last_bytes = k.bytes;
    q.last_sent = _now;
    q.sent_bytes += k.bytes;
    q.next_avail = _now + common::serialization_ns(k.bytes, q.rate_bps());
    if (!q.dctcp) {
        q.dcqcn.on_bytes_sent(k.bytes);
    }
    roce_arm_rto(fid);
    roce_forward(i, f.spec.src);
}

void simulation::roce_retime(roce_qp& q)
{
    // A new rate applies to the gap after the last packet (artefact ChangeRate).
    if (q.next_avail > _now) {
        q.next_avail = std::max(_now, q.last_sent + common::serialization_ns(q.last_bytes, q.rate_bps()));
    }
}

void simulation::roce_arm(std::uint32_t fid, roce_timer kind, time_ns at)
{
    auto& g = _qps[fid].gen[static_cast<std::size_t>(kind)];
    ++g;
    _events.push(at, event_kind::roce_timer, fid, static_cast<std::uint32_t>(kind) | (g << 2));
}

void simulation::roce_arm_rto(std::uint32_t fid)
{
    auto& q = _qps[fid];
    const auto& p = _scenario.roce;
    const bool irn = p.recovery == loss_recovery::irn;
    if (irn && _scenario.fabric.pfc) {
        return; // the artefact turns IRN's timeouts off on a lossless fabric (spurious resends)
    }
    time_ns rto = p.rto_ns;
    if (irn) {
        rto = q.snd_nxt - q.snd_una < 3 ? p.irn_rto_low_ns : p.irn_rto_high_ns;
    }
    // IB spec o9-85: the timer restarts with every packet sent and every ACK.
    q.rto_deadline = _now + rto;
    if (!q.rto_event) {
        q.rto_event = true;
        roce_arm(fid, roce_timer::rto, q.rto_deadline);
    }
}

void simulation::on_roce_timer(std::uint32_t fid, std::uint32_t arg)
{
    auto& q = _qps[fid];
    const auto kind = static_cast<roce_timer>(arg & 3u);
    if ((arg >> 2) != q.gen[static_cast<std::size_t>(kind)] || !q.active) {
        if (kind == roce_timer::rto && (arg >> 2) == q.gen[0]) {
            q.rto_event = false;
        }
        return; // superseded, or the QP is done
    }
    const topology::node_id h = _flows[fid].spec.src;
    switch (kind) {
    case roce_timer::rto: {
        q.rto_event = false;
        if (q.rto_deadline == no_time) {
            return;
        }
        if (_now < q.rto_deadline) {
            q.rto_event = true;
            roce_arm(fid, roce_timer::rto, q.rto_deadline);
            return;
        }
        q.rto_deadline = no_time;
        if (q.snd_nxt <= q.snd_una && !q.recovery) {
            return; // nothing outstanding
        }
        ++_roce.timeouts;
        if (_scenario.roce.recovery == loss_recovery::irn) {
            q.recovery = true;
            q.recovery_end = q.snd_nxt;
            q.high_sack = q.snd_nxt; // an RTO: every unacknowledged PSN is resent
            q.retx_next = q.snd_una;
        } else {
            q.snd_nxt = q.snd_una; // go back to the first unacknowledged PSN
        }
        if (_scenario.scheme == scheme::plb) {
            // PLB pauses repathing after an RTO (60-120 s in the artefact: for the rest of a run).
            q.plb_paused = true;
            q.congested_rounds = 0;
        }
        host_policy_timeout(fid, q);
        roce_arm_rto(fid);
        roce_pump(h);
        return;
    }
    case roce_timer::decrease:
        if (q.dcqcn.on_decrease_check(_now)) {
            ++_roce.rate_decreases;
            roce_arm(fid, roce_timer::increase, q.dcqcn.rp_timer_due());
            roce_retime(q);
        }
        return;
    case roce_timer::increase:
        if (q.dcqcn.rp_timer_due() != _now) {
            return;
        }
        q.dcqcn.on_rp_timer(_now);
        ++_roce.rate_increases;
        if (q.dcqcn.rp_timer_due() != no_time) {
            roce_arm(fid, roce_timer::increase, q.dcqcn.rp_timer_due());
        }
        roce_retime(q);
        roce_pump(h);
        return;
    case roce_timer::count_:
        return;
    }
}

std::uint32_t simulation::roce_control(roce_op op, packet_class cls, bool priority, topology::node_id src,
                                       topology::node_id dst, std::uint32_t flow)
{
    const std::uint32_t i = _packets.alloc();
    packet& c = _packets[i];
    c.kind = carrier::roce;
    c.cls = cls;
    c.op = op;
    c.priority = priority;
    c.bytes = roce_ctl_bytes;
    c.src = src;
    c.dst = dst;
    c.flow = flow;
    return i;
}

void simulation::roce_done(std::uint32_t fid)
{
    auto& q = _qps[fid];
    q.active = false;
    q.rto_deadline = no_time;
    for (auto& g : q.gen) {
        ++g; // pending timers become stale
    }
    q.rto_event = false;
    auto& nic = _nics[_flows[fid].spec.src];
    const auto it = std::find(nic.active.begin(), nic.active.end(), fid);
    if (it != nic.active.end()) {
        const auto idx = static_cast<std::size_t>(it - nic.active.begin());
        nic.active.erase(it);
        if (nic.rr > idx) {
            --nic.rr;
        }
        if (nic.rr >= nic.active.size()) {
            nic.rr = 0;
        }
    }
}

// --- the fabric ---------------------------------------------------------------

void simulation::roce_forward(std::uint32_t i, topology::node_id at)
{
    if (++_packets[i].hops > max_hops) {
        drop(i, drop_reason::hop_limit);
        return;
    }
    port_id out = no_port;
    switch (_packets[i].op) {
    case roce_op::data:
    case roce_op::probe: { // a probe takes the path its entropy hashes to, like DATA
        const packet& first = _packets[i];
        if (!first.routed && at == _tor[first.src]) {
            lb_source_tor(i, at);
        }
        if (first.op == roce_op::data && at == _tor[first.dst] && !first.cw_released && lb_dest_tor(i, at)) {
            return; // held (ConWeave's reorder queue)
        }
        packet& k = _packets[i]; // lb_dest_tor may have added records
        if (at == k.dst) {
            roce_deliver(i, at);
            return;
        }
        while (k.anchor_index < k.anchor_count && k.anchors[k.anchor_index] == at) {
            ++k.anchor_index;
        }
        const topology::node_id target = k.anchor_index < k.anchor_count ? k.anchors[k.anchor_index] : k.dst;
        out = _forwarding->toward(at, target);
        if (out != no_port && !_dre.empty()) {
            k.conga_ce = std::max(k.conga_ce, dre_level(out));
        }
        if (out != no_port && k.elephant && !_reunion_port_flows.empty()) {
            reunion_hop(k, out);
        }
        break;
    }
    case roce_op::ack:
    case roce_op::nack:
    case roce_op::probe_reply: {
        packet& k = _packets[i];
        lb_on_ack(k, at);
        if (at == k.dst) {
            roce_deliver(i, at);
            return;
        }
        // Control packets go by flow ECMP over shortest paths (artefacts).
        out = _forwarding->ecmp(at, k.dst, mix32(k.hash ^ _nodes[at].ecmp_salt),
                                [this](port_id p) { return _ports[p].up; });
        break;
    }
    case roce_op::cw_reply:
    case roce_op::cw_notify:
    case roce_op::reunion_notify:
        if (at == _packets[i].dst) {
            lb_control(i, at);
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

void simulation::roce_deliver(std::uint32_t i, topology::node_id host)
{
    const packet k = _packets[i];
    _packets.release(i);
    switch (k.op) {
    case roce_op::data:
        roce_on_data(k, host);
        return;
    case roce_op::probe:
        hopper_answer(k, host);
        return;
    case roce_op::probe_reply:
        hopper_on_reply(k);
        return;
    default:
        roce_on_ack(k);
        return;
    }
}

// --- receiver -------------------------------------------------------------------

void simulation::roce_send_ack(const flow& f, topology::node_id host, roce_op op, std::uint32_t psn,
                               const packet& data, bool ooo, std::int64_t sack)
{
    const bool ce = data.ce;
    auto& rx = _rxs[f.id];
    const auto& dc = _scenario.roce.dcqcn;
    const std::uint32_t i = _packets.alloc();
    packet& a = _packets[i];
    a.kind = carrier::roce;
    a.cls = packet_class::ack;
    a.op = op;
    a.priority = true; // ACKs at high priority (artefacts: enableAckHigherPrio)
    a.bytes = roce_ack_bytes;
    a.src = host;
    a.dst = f.spec.src;
    a.flow = f.id;
    a.psn = psn;
    a.ecn_echo = ce;
    a.entropy = data.entropy; // echoed: REPS recycles it, Hopper and FlowBender time it
    a.sent_ns = data.sent_ns;
    // The ACK's 5-tuple follows its DATA's (a sprayed packet's entropy sprays its ACK too).
    a.hash = mix32(data.hash ^ 0x5bd1e995u);
    if (sack >= 0) {
        a.has_sack = true;
        a.sack = static_cast<std::uint32_t>(sack);
    }
    // DCQCN's notification point: at most one CNP per np_interval per QP.
    if ((ce || (ooo && dc.cnp_on_nack)) && (rx.last_cnp < 0 || _now - rx.last_cnp >= dc.np_interval_ns)) {
        a.cnp = true;
        rx.last_cnp = _now;
        ++_roce.cnps_sent;
    }
    _roce.ecn_echoes += ce ? 1 : 0;
    ++(op == roce_op::nack ? _roce.nacks_sent : _roce.acks_sent);
    roce_forward(i, host);
}

void simulation::roce_on_data(const packet& k, topology::node_id host)
{
    auto& f = _flows[k.flow];
    auto& rx = _rxs[k.flow];
    const auto& p = _scenario.roce;
    const std::uint32_t psn = k.psn;
    if (p.recovery == loss_recovery::go_back_n) {
        if (psn == rx.expected) {
            ++rx.expected;
            frame_delivered(f, psn);
            roce_send_ack(f, host, roce_op::ack, rx.expected, k, false, -1);
        } else if (psn > rx.expected) {
            // A gap: RoCEv2 drops it and NACKs the first missing PSN, again
            // only after nack_interval unless the gap moved (artefact ReceiverCheckSeq).
            ++_roce.rx_out_of_order;
            if (_now >= rx.nack_timer || rx.last_nack != rx.expected) {
                rx.nack_timer = _now + p.nack_interval_ns;
                rx.last_nack = rx.expected;
                roce_send_ack(f, host, roce_op::nack, rx.expected, k, true, -1);
            }
        } else {
            ++_roce.rx_duplicates;
            roce_send_ack(f, host, roce_op::ack, rx.expected, k, false, -1); // IB spec C9-110
        }
        return;
    }
    // IRN: out-of-order DATA is kept (written to memory) and selectively NACKed.
    _roce_reorder[std::min<std::size_t>(rx.held, _roce_reorder.size() - 1)] += 1;
    _roce_reorder_max = std::max<std::uint64_t>(_roce_reorder_max, rx.held);
    if (psn == rx.expected) {
        frame_delivered(f, psn);
        ++rx.expected;
        while (rx.expected < f.frames && get_bit(rx.received, rx.expected)) {
            ++rx.expected;
            --rx.held;
        }
        // All caught up: an ACK; holes remain: a NACK without SACK (still recovering).
        roce_send_ack(f, host, rx.held == 0 ? roce_op::ack : roce_op::nack, rx.expected, k, false, -1);
    } else if (psn > rx.expected) {
        ++_roce.rx_out_of_order;
        if (psn - rx.expected <= _reorder_tolerance && !get_bit(rx.received, psn)) {
            // Within the reordering a spraying scheme expects (Hopper's extended
            // IRN, seed 002 §4.1): kept and acknowledged normally, no NACK.
            set_bit(rx.received, psn);
            ++rx.held;
            frame_delivered(f, psn);
            roce_send_ack(f, host, roce_op::ack, rx.expected, k, false, psn); // an ACK with its SACK
            return;
        }
        if (get_bit(rx.received, psn)) {
            ++_roce.rx_duplicates;
            if (_now < rx.nack_timer) {
                return;
            }
        } else {
            set_bit(rx.received, psn);
            ++rx.held;
            frame_delivered(f, psn);
        }
        rx.nack_timer = _now + p.nack_interval_ns;
        roce_send_ack(f, host, roce_op::nack, rx.expected, k, true, psn);
    } else {
        ++_roce.rx_duplicates;
        roce_send_ack(f, host, rx.held == 0 ? roce_op::ack : roce_op::nack, rx.expected, k, false, -1);
    }
}

void simulation::roce_on_ack(const packet& k)
{
    auto& q = _qps[k.flow];
    if (!q.active) {
        return; // a late ACK of a finished QP
    }
    const auto& p = _scenario.roce;
    const topology::node_id h = _flows[k.flow].spec.src;
    if (p.recovery == loss_recovery::go_back_n) {
        q.snd_una = std::max(q.snd_una, k.psn);
        if (k.op == roce_op::nack) {
            ++_roce.go_back;
            q.snd_nxt = q.snd_una; // resend from the gap
        }
        q.snd_nxt = std::max(q.snd_nxt, q.snd_una);
    } else {
        q.snd_una = std::max(q.snd_una, k.psn);
        if (k.has_sack && k.sack < q.frames) {
            set_bit(q.sacked, k.sack);
            q.high_sack = std::max(q.high_sack, k.sack + 1);
        }
        while (q.snd_una < q.frames && q.is_sacked(q.snd_una)) {
            ++q.snd_una;
        }
        q.snd_nxt = std::max(q.snd_nxt, q.snd_una);
        if (k.has_sack && k.op == roce_op::nack && !q.recovery) {
            ++_roce.go_back;
            q.recovery = true;
            q.recovery_end = q.snd_nxt;
            q.retx_next = q.snd_una;
        }
        if (q.recovery && q.snd_una >= q.recovery_end) {
            q.recovery = false;
        }
    }

    // Congestion control.
    if (q.dctcp) {
        const auto r = q.dctcp_state.on_ack(q.snd_una, q.snd_nxt, k.ecn_echo);
        _roce.rate_decreases += r.cut ? 1 : 0;
        if (r.new_round && _scenario.scheme == scheme::plb) {
            // PLB (Qureshi et al., SIGCOMM 2022; artefact plbCheckRehash): a
            // round is congested when at least half its ACKs echo ECN; repath
            // after forced_rounds of them, or after idle_rounds when nothing is
            // in flight (no reordering).
            const auto& plb = p.plb;
            const bool congested = r.fraction >= plb.congested_fraction;
            q.congested_rounds = congested ? q.congested_rounds + 1 : 0;
            ++_roce.plb_rounds;
            _roce.plb_congested += congested ? 1 : 0;
            const bool idle = q.congested_rounds >= plb.idle_rounds && q.snd_nxt == q.snd_una;
            const bool forced = q.congested_rounds >= plb.forced_rounds;
            const auto& cs = candidates(h, _flows[k.flow].spec.dst);
            if (!q.plb_paused && (idle || forced) && cs.paths.size() > 1) {
                const auto n = static_cast<std::uint32_t>(cs.paths.size());
                const std::uint32_t next = (q.pid + 1 + _lb_rng[h].below(n - 1)) % n;
                q.pid = static_cast<std::uint16_t>(next);
                q.congested_rounds = 0;
                ++_roce.plb_repaths;
                ++_roce.path_changes;
            }
        }
        roce_retime(q);
    } else if (k.cnp) {
        const time_ns due = q.dcqcn.on_cnp(_now);
        if (due != no_time) {
            roce_arm(k.flow, roce_timer::decrease, due);
        }
        roce_retime(q);
    }
    host_policy_ack(k, q);

    if (q.finished()) {
        roce_done(k.flow);
        return;
    }
    if (q.snd_nxt > q.snd_una || q.recovery) {
        roce_arm_rto(k.flow);
    } else {
        q.rto_deadline = no_time;
    }
    roce_pump(h);
}

} // namespace laps::fabric
