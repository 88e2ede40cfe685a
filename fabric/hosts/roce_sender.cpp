// The RoCE NIC model's sending side: QPs start, the NIC's TX scheduler pulls
// packets from them round-robin while its ports have room, pacing at each
// QP's DCQCN or DCTCP rate; ACKs move the window, NACKs and timeouts resend
// (Go-Back-N or IRN). The scheme hears of every step (schemes::scheme).
#include "fabric/frames.hpp"
#include "fabric/hosts/roce_hosts.hpp"
#include "fabric/schemes/registry.hpp"
#include "fabric/schemes/scheme.hpp"

#include <rte_mbuf.h>

#include <algorithm>
#include <cmath>

namespace laps::fabric::hosts {

namespace {

// QP timers carry their kind in the low 2 bits of the event's arg, a
// generation above; this kind is the NIC's wake-up (target: the host).
constexpr std::uint32_t nic_wake = 3;

void set_bit(std::vector<std::uint64_t>& bits, std::uint32_t i) noexcept
{
    bits[i / 64] |= std::uint64_t{1} << (i % 64);
}

} // namespace

pool_plan roce_hosts::plan(const scenario& s)
{
    // Packet records, not mbufs: minimal pools.
    const std::uint32_t frame_bytes = s.fabric.frame_bytes;
    pool_plan p;
    p.frame_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + frame_bytes);
    p.wire_room = static_cast<std::uint16_t>(RTE_PKTMBUF_HEADROOM + frame_bytes + wire::max_overhead + 64);
    p.control_room = wire::header_mbuf_data_room;
    p.frames = 1024;
    p.wire = 1024;
    p.control = 1024;
    p.eal_memory_mb = 256;
    return p;
}

roce_hosts::roce_hosts(simulation& sim)
    : _sim(sim), _p(sim.config().roce),
      _dctcp(sim.scheme().hosts == schemes::transport::roce_dctcp),
      _packet_bytes(payload_per_frame(sim.config().fabric.frame_bytes) + roce_data_overhead)
{
    const auto& s = sim.config();
    const bool reorders = sim.scheme().reorders;
    // A spraying scheme needs out-of-order delivery whatever the flow control.
    _irn = _p.recovery == loss_recovery::automatic ? !(s.fabric.pfc && !reorders) : _p.recovery == loss_recovery::irn;
    const auto tolerance = _p.reorder_tolerance_packets;
    _reorder_tolerance = tolerance >= 0 ? static_cast<std::uint32_t>(tolerance) : (reorders ? 64u : 0u);
    const auto& hosts = sim.hosts();
    _nics.resize(hosts.size());
    for (std::size_t h = 0; h < hosts.size(); ++h) {
        std::uint32_t pids = 1;
        for (const auto& row : hosts[h].table.pit) {
            pids = std::max<std::uint32_t>(pids, row.pid + 1u);
        }
        _nics[h].packets_per_pid.assign(pids, 0);
    }
    _qps.resize(sim.flows().size());
    _rxs.resize(sim.flows().size());
}

void roce_hosts::start_flow(flow& f)
{
    auto& q = _qps[f.id];
    const auto& hosts = _sim.hosts();
    q.active = true;
    q.frames = f.frames;
    q.line_bps = hosts[f.spec.src].rate_bps;
    // RoCEv2 puts QP entropy in the UDP source port (0xC000 | hash of the QPN).
    q.entropy = static_cast<std::uint16_t>(mix32(f.id * 0x9e3779b1u + 1) & 0x3fffu);
    q.sport = entropy_port(q.entropy);
    q.hash = roce_hash(hosts[f.spec.src], hosts[f.spec.dst], q.sport);
    q.dctcp = _dctcp;
    if (q.dctcp) {
        q.dctcp_state = dctcp_cc(_p.dctcp, q.line_bps);
    } else {
        q.dcqcn = dcqcn_rp(_p.dcqcn, q.line_bps);
    }
    const bool window = _p.window == window_mode::bdp || (_p.window == window_mode::automatic && q.dctcp);
    const auto& cs = _sim.candidates().of(f.spec.src, f.spec.dst);
    if (window) {
        // One BDP: the slowest candidate's round trip at the line rate.
        const double bdp = q.line_bps * static_cast<double>(cs.base_rtt_ns) / 8e9;
        q.window_packets = std::max<std::uint64_t>(2, static_cast<std::uint64_t>(std::ceil(bdp / _packet_bytes)));
    }
    if (_irn) {
        q.irn.sacked.assign((f.frames + 63) / 64, 0);
        _rxs[f.id].received.assign((f.frames + 63) / 64, 0);
    }
    _sim.balancer().on_flow_start(f, q, cs);
    q.next_avail = _sim.now();
    _nics[f.spec.src].active.push_back(f.id);
    pump(f.spec.src);
}

bool roce_hosts::next_psn(roce_qp& q, std::uint32_t& psn) const
{
    if (q.finished()) {
        return false;
    }
    if (_irn && q.irn.recovery) {
        // IRN resends a PSN only when a later one was SACKed (or after an RTO).
        const std::uint32_t end = std::min(q.irn.recovery_end, q.irn.high_sack);
        std::uint32_t p = std::max(q.irn.retx_next, q.snd_una);
        while (p < end && q.irn.is_sacked(p)) {
            ++p;
        }
        q.irn.retx_next = p;
        if (p < end) {
            psn = p;
            return true;
        }
    }
    if (q.snd_nxt >= q.frames) {
        return false;
    }
    std::uint64_t limit = q.window_packets;
    if (_irn) {
        const std::uint64_t bdp = std::max<std::uint64_t>(1, _p.irn_bdp_bytes / _packet_bytes);
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

void roce_hosts::pump(topology::node_id h)
{
    auto& nic = _nics[h];
    const auto& node = _sim.nodes()[h];
    const auto room = static_cast<std::uint32_t>(node.ports.size()) * _p.nic_queue_packets;
    const time_ns now = _sim.now();
    time_ns earliest = no_time;
    while (node.nic_queued < room && !nic.active.empty()) {
        bool sent = false;
        const std::size_t n = nic.active.size();
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t idx = (nic.rr + k) % n;
            const std::uint32_t fid = nic.active[idx];
            auto& q = _qps[fid];
            std::uint32_t psn = 0;
            if (!next_psn(q, psn)) {
                continue;
            }
            if (q.next_avail > now) {
                earliest = std::min(earliest, q.next_avail);
                continue;
            }
            nic.rr = idx + 1;
            emit(fid, psn);
            sent = true;
            break;
        }
        if (!sent) {
            break;
        }
    }
    if (earliest != no_time && (nic.wake_at == no_time || earliest < nic.wake_at || nic.wake_at <= now)) {
        nic.wake_at = earliest;
        _sim.schedule().push(earliest, event_kind::host_timer, h, nic_wake);
    }
}

void roce_hosts::on_nic_wake(topology::node_id h, time_ns at)
{
    auto& nic = _nics[h];
    if (nic.wake_at != at) {
        return; // superseded
    }
    nic.wake_at = no_time;
    pump(h);
}

void roce_hosts::emit(std::uint32_t fid, std::uint32_t psn)
{
    auto& q = _qps[fid];
    auto& f = _sim.flows()[fid];
    auto& packets = _sim.packets();
    const time_ns now = _sim.now();
    const std::uint32_t i = packets.alloc();
    packet& k = packets[i];
    k.kind = carrier::roce;
    k.cls = packet_class::data;
    k.roce.op = roce_op::data;
    k.bytes = frame_payload(f.spec.bytes, _sim.config().fabric.frame_bytes, psn) + roce_data_overhead;
    k.roce.src = f.spec.src;
    k.dst = f.spec.dst;
    k.flow = fid;
    k.roce.psn = psn;
    k.ect = true;
    k.hash = q.hash;
    k.roce.sent_ns = now;
    _sim.balancer().on_send(f, q, k);
    ++_counters.data_sent;
    if (psn < q.max_sent) {
        ++_counters.data_resent;
        k.retransmit = true;
        ++f.resent;
        if (q.first_resend == 0xffffffffu) {
            q.first_resend = psn;
        }
    } else {
        q.max_sent = psn + 1;
        f.first_wire_bytes += k.bytes;
    }
    if (q.irn.recovery && psn < q.irn.recovery_end) {
        q.irn.retx_next = psn + 1;
    } else {
        q.snd_nxt = psn + 1;
    }
    q.last_bytes = k.bytes;
    q.last_sent = now;
    q.sent_bytes += k.bytes;
    q.next_avail = now + common::serialization_ns(k.bytes, q.rate_bps());
    if (!q.dctcp) {
        q.dcqcn.on_bytes_sent(k.bytes);
    }
    arm_rto(fid);
    _sim.forward(i, f.spec.src);
}

void roce_hosts::retime(roce_qp& q)
{
    // A new rate applies to the gap after the last packet (artefact ChangeRate).
    const time_ns now = _sim.now();
    if (q.next_avail > now) {
        q.next_avail = std::max(now, q.last_sent + common::serialization_ns(q.last_bytes, q.rate_bps()));
    }
}

void roce_hosts::arm(std::uint32_t fid, roce_timer kind, time_ns at)
{
    auto& g = _qps[fid].gen[static_cast<std::size_t>(kind)];
    ++g;
    _sim.schedule().push(at, event_kind::host_timer, fid, static_cast<std::uint32_t>(kind) | (g << 2));
}

void roce_hosts::arm_rto(std::uint32_t fid)
{
    auto& q = _qps[fid];
    if (_irn && _sim.config().fabric.pfc) {
        return; // the artefact turns IRN's timeouts off on a lossless fabric (spurious resends)
    }
    time_ns rto = _p.rto_ns;
    if (_irn) {
        rto = q.snd_nxt - q.snd_una < 3 ? _p.irn_rto_low_ns : _p.irn_rto_high_ns;
    }
    // IB spec o9-85: the timer restarts with every packet sent and every ACK.
    q.rto_deadline = _sim.now() + rto;
    if (!q.rto_event) {
        q.rto_event = true;
        arm(fid, roce_timer::rto, q.rto_deadline);
    }
}

void roce_hosts::on_timer(const event& e)
{
    if ((e.arg & 3u) == nic_wake) {
        on_nic_wake(e.target, e.at);
    } else {
        on_qp_timer(e.target, e.arg);
    }
}

void roce_hosts::on_qp_timer(std::uint32_t fid, std::uint32_t arg)
{
    auto& q = _qps[fid];
    const auto kind = static_cast<roce_timer>(arg & 3u);
    if ((arg >> 2) != q.gen[static_cast<std::size_t>(kind)] || !q.active) {
        if (kind == roce_timer::rto && (arg >> 2) == q.gen[0]) {
            q.rto_event = false;
        }
        return; // superseded, or the QP is done
    }
    const time_ns now = _sim.now();
    const topology::node_id h = _sim.flows()[fid].spec.src;
    switch (kind) {
    case roce_timer::rto: {
        q.rto_event = false;
        if (q.rto_deadline == no_time) {
            return;
        }
        if (now < q.rto_deadline) {
            q.rto_event = true;
            arm(fid, roce_timer::rto, q.rto_deadline);
            return;
        }
        q.rto_deadline = no_time;
        if (q.snd_nxt <= q.snd_una && !q.irn.recovery) {
            return; // nothing outstanding
        }
        ++_counters.timeouts;
        if (_irn) {
            q.irn.recovery = true;
            q.irn.recovery_end = q.snd_nxt;
            q.irn.high_sack = q.snd_nxt; // an RTO: every unacknowledged PSN is resent
            q.irn.retx_next = q.snd_una;
        } else {
            q.snd_nxt = q.snd_una; // go back to the first unacknowledged PSN
        }
        _sim.balancer().on_timeout(fid, q);
        arm_rto(fid);
        pump(h);
        return;
    }
    case roce_timer::decrease:
        if (q.dcqcn.on_decrease_check(now)) {
            ++_counters.rate_decreases;
            arm(fid, roce_timer::increase, q.dcqcn.rp_timer_due());
            retime(q);
        }
        return;
    case roce_timer::increase:
        if (q.dcqcn.rp_timer_due() != now) {
            return;
        }
        q.dcqcn.on_rp_timer(now);
        ++_counters.rate_increases;
        if (q.dcqcn.rp_timer_due() != no_time) {
            arm(fid, roce_timer::increase, q.dcqcn.rp_timer_due());
        }
        retime(q);
        pump(h);
        return;
    case roce_timer::count_:
        return;
    }
}

void roce_hosts::on_ack(const packet& k)
{
    auto& q = _qps[k.flow];
    if (!q.active) {
        return; // a late ACK of a finished QP
    }
    const topology::node_id h = _sim.flows()[k.flow].spec.src;
    if (!_irn) {
        q.snd_una = std::max(q.snd_una, k.roce.psn);
        if (k.roce.op == roce_op::nack) {
            ++_counters.go_back;
            q.snd_nxt = q.snd_una; // resend from the gap
        }
        q.snd_nxt = std::max(q.snd_nxt, q.snd_una);
    } else {
        q.snd_una = std::max(q.snd_una, k.roce.psn);
        if (k.roce.has_sack && k.roce.sack < q.frames) {
            set_bit(q.irn.sacked, k.roce.sack);
            q.irn.high_sack = std::max(q.irn.high_sack, k.roce.sack + 1);
        }
        while (q.snd_una < q.frames && q.irn.is_sacked(q.snd_una)) {
            ++q.snd_una;
        }
        q.snd_nxt = std::max(q.snd_nxt, q.snd_una);
        if (k.roce.has_sack && k.roce.op == roce_op::nack && !q.irn.recovery) {
            ++_counters.go_back;
            q.irn.recovery = true;
            q.irn.recovery_end = q.snd_nxt;
            q.irn.retx_next = q.snd_una;
        }
        if (q.irn.recovery && q.snd_una >= q.irn.recovery_end) {
            q.irn.recovery = false;
        }
    }

    // Congestion control.
    if (q.dctcp) {
        const auto r = q.dctcp_state.on_ack(q.snd_una, q.snd_nxt, k.roce.ecn_echo);
        _counters.rate_decreases += r.cut ? 1 : 0;
        if (r.new_round) {
            _sim.balancer().on_round(k.flow, q, r.fraction);
        }
        retime(q);
    } else if (k.roce.cnp) {
        const time_ns due = q.dcqcn.on_cnp(_sim.now());
        if (due != no_time) {
            arm(k.flow, roce_timer::decrease, due);
        }
        retime(q);
    }
    _sim.balancer().on_ack(k, q);

    if (q.finished()) {
        finish(k.flow);
        return;
    }
    if (q.snd_nxt > q.snd_una || q.irn.recovery) {
        arm_rto(k.flow);
    } else {
        q.rto_deadline = no_time;
    }
    pump(h);
}

void roce_hosts::finish(std::uint32_t fid)
{
    auto& q = _qps[fid];
    q.active = false;
    q.rto_deadline = no_time;
    for (auto& g : q.gen) {
        ++g; // pending timers become stale
    }
    q.rto_event = false;
    auto& nic = _nics[_sim.flows()[fid].spec.src];
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

} // namespace laps::fabric::hosts
