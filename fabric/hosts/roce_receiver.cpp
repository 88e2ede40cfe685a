// The RoCE NIC model's receiving side: DATA is acknowledged (Go-Back-N drops
// a gap and NACKs it; IRN keeps it and NACKs selectively), CE marks become
// CNPs (DCQCN's notification point) and ECN echoes; probes are answered.
#include "fabric/hosts/roce_hosts.hpp"
#include "fabric/schemes/scheme.hpp"

#include <algorithm>

namespace laps::fabric::hosts {

namespace {

void set_bit(std::vector<std::uint64_t>& bits, std::uint32_t i) noexcept
{
    bits[i / 64] |= std::uint64_t{1} << (i % 64);
}

bool get_bit(const std::vector<std::uint64_t>& bits, std::uint32_t i) noexcept
{
    return (bits[i / 64] >> (i % 64) & 1u) != 0;
}

// The 5-tuple of an answer follows the packet it answers (a sprayed DATA's
// entropy sprays its ACK too).
std::uint32_t answer_hash(std::uint32_t hash) noexcept
{
    return mix32(hash ^ 0x5bd1e995u);
}

} // namespace

void roce_hosts::deliver(std::uint32_t i, topology::node_id host)
{
    const packet k = _sim.packets()[i];
    _sim.packets().release(i);
    switch (k.roce.op) {
    case roce_op::data:
        on_data(k, host);
        return;
    case roce_op::probe:
        answer_probe(k, host);
        return;
    case roce_op::probe_reply:
        _sim.balancer().on_probe_reply(k, _qps[k.flow]);
        return;
    default:
        on_ack(k);
        return;
    }
}

void roce_hosts::send_ack(const flow& f, topology::node_id host, roce_op op, std::uint32_t psn, const packet& data,
                          bool ooo, std::int64_t sack)
{
    const bool ce = data.ce;
    auto& rx = _rxs[f.id];
    const auto& dc = _p.dcqcn;
    const time_ns now = _sim.now();
    auto& packets = _sim.packets();
    const std::uint32_t i = packets.alloc();
    packet& a = packets[i];
    a.kind = carrier::roce;
    a.cls = packet_class::ack;
    a.roce.op = op;
    a.priority = true; // ACKs at high priority (artefacts: enableAckHigherPrio)
    a.bytes = roce_ack_bytes;
    a.roce.src = host;
    a.dst = f.spec.src;
    a.flow = f.id;
    a.roce.psn = psn;
    a.roce.ecn_echo = ce;
    a.roce.entropy = data.roce.entropy; // echoed: host-side schemes recycle it or time it
    a.roce.sent_ns = data.roce.sent_ns;
    a.hash = answer_hash(data.hash);
    if (sack >= 0) {
        a.roce.has_sack = true;
        a.roce.sack = static_cast<std::uint32_t>(sack);
    }
    // DCQCN's notification point: at most one CNP per np_interval per QP.
    if ((ce || (ooo && dc.cnp_on_nack)) && (rx.last_cnp < 0 || now - rx.last_cnp >= dc.np_interval_ns)) {
        a.roce.cnp = true;
        rx.last_cnp = now;
        ++_counters.cnps_sent;
    }
    _counters.ecn_echoes += ce ? 1 : 0;
    ++(op == roce_op::nack ? _counters.nacks_sent : _counters.acks_sent);
    _sim.forward(i, host);
}

void roce_hosts::on_data(const packet& k, topology::node_id host)
{
    auto& f = _sim.flows()[k.flow];
    auto& rx = _rxs[k.flow];
    const time_ns now = _sim.now();
    const std::uint32_t psn = k.roce.psn;
    if (!_irn) {
        if (psn == rx.expected) {
            ++rx.expected;
            _sim.frame_delivered(f, psn);
            send_ack(f, host, roce_op::ack, rx.expected, k, false, -1);
        } else if (psn > rx.expected) {
            // A gap: RoCEv2 drops it and NACKs the first missing PSN, again
            // only after nack_interval unless the gap moved (artefact ReceiverCheckSeq).
            ++_counters.rx_out_of_order;
            if (now >= rx.nack_timer || rx.last_nack != rx.expected) {
                rx.nack_timer = now + _p.nack_interval_ns;
                rx.last_nack = rx.expected;
                send_ack(f, host, roce_op::nack, rx.expected, k, true, -1);
            }
        } else {
            ++_counters.rx_duplicates;
            send_ack(f, host, roce_op::ack, rx.expected, k, false, -1); // IB spec C9-110
        }
        return;
    }
    // IRN: out-of-order DATA is kept (written to memory) and selectively NACKed.
    _reorder[std::min<std::size_t>(rx.held, _reorder.size() - 1)] += 1;
    _reorder_max = std::max<std::uint64_t>(_reorder_max, rx.held);
    if (psn == rx.expected) {
        _sim.frame_delivered(f, psn);
        ++rx.expected;
        while (rx.expected < f.frames && get_bit(rx.received, rx.expected)) {
            ++rx.expected;
            --rx.held;
        }
        // All caught up: an ACK; holes remain: a NACK without SACK (still recovering).
        send_ack(f, host, rx.held == 0 ? roce_op::ack : roce_op::nack, rx.expected, k, false, -1);
    } else if (psn > rx.expected) {
        ++_counters.rx_out_of_order;
        if (psn - rx.expected <= _reorder_tolerance && !get_bit(rx.received, psn)) {
            // Within the reordering a spraying scheme expects (Hopper's extended
            // IRN, seed 002 §4.1): kept and acknowledged normally, no NACK.
            set_bit(rx.received, psn);
            ++rx.held;
            _sim.frame_delivered(f, psn);
            send_ack(f, host, roce_op::ack, rx.expected, k, false, psn); // an ACK with its SACK
            return;
        }
        if (get_bit(rx.received, psn)) {
            ++_counters.rx_duplicates;
            if (now < rx.nack_timer) {
                return;
            }
        } else {
            set_bit(rx.received, psn);
            ++rx.held;
            _sim.frame_delivered(f, psn);
        }
        rx.nack_timer = now + _p.nack_interval_ns;
        send_ack(f, host, roce_op::nack, rx.expected, k, true, psn);
    } else {
        ++_counters.rx_duplicates;
        send_ack(f, host, rx.held == 0 ? roce_op::ack : roce_op::nack, rx.expected, k, false, -1);
    }
}

void roce_hosts::answer_probe(const packet& probe, topology::node_id host)
{
    // In the ACK class: the answer should time the probe's way, not its own.
    auto& packets = _sim.packets();
    const std::uint32_t i =
        new_control(packets, roce_op::probe_reply, packet_class::probe_ack, true, host, probe.roce.src, probe.flow);
    packet& a = packets[i];
    a.roce.entropy = probe.roce.entropy;
    a.roce.sent_ns = probe.roce.sent_ns;
    a.hash = answer_hash(probe.hash);
    _sim.forward(i, host);
}

} // namespace laps::fabric::hosts
