// The host-side path policies of the other seeds on the RoCE NIC model
// (issue 17; policy/ holds their state): every DATA packet's UDP source port
// carries an entropy and the source ToR's ECMP hash picks its path, as on a
// fabric of plain ECMP switches.
//   rps        a random entropy per packet (oblivious spraying);
//   reps       REPS's entropy (policy/reps.hpp) from the ACKs' echoes;
//   hopper     one entropy per flow, moved by RTT probing (policy/hopper.hpp);
//   flowbender one entropy per flow, moved at random on ECN (policy/flowbender.hpp);
//   selective  a random entropy per packet for elephants, the QP's own for mice.
#include "fabric/simulation.hpp"
#include "policy/selective.hpp"

#include <algorithm>

namespace laps::fabric {

namespace {

constexpr std::uint16_t entropy_port(std::uint32_t entropy) noexcept
{
    return static_cast<std::uint16_t>(0xc000u | (entropy & 0x3fffu));
}

} // namespace

std::uint32_t simulation::roce_hash(topology::node_id src, topology::node_id dst, std::uint16_t sport) const
{
    const std::uint32_t dst_ip = _hosts[dst].ipv4;
    return mix32(_hosts[src].ipv4 ^ mix32(dst_ip ^ mix32((std::uint32_t{sport} << 16 | roce_udp_port) ^ 17u)));
}

void simulation::host_policy_start(const flow& f, roce_qp& q, const candidate_set& cs)
{
    const auto& p = _scenario.roce;
    const std::uint32_t packet_bytes = payload_per_frame(_scenario.fabric.frame_bytes) + roce_data_overhead;
    switch (_scenario.scheme) {
    case scheme::reps: {
        policy::reps_config c;
        c.entropies = p.reps.entropies;
        c.cache_size = p.reps.cache_size;
        c.explore_packets = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, p.irn_bdp_bytes / packet_bytes));
        c.freeze_ns = p.reps.freeze_ns;
        q.reps.emplace(c);
        q.fixed_entropy = false;
        return;
    }
    case scheme::hopper: {
        policy::hopper_config c;
        // Base RTT: the fastest candidate there and an ACK's way back.
        time_ns fastest = cs.base_rtt_ns / 2;
        for (const auto& path : cs.paths) {
            fastest = std::min(fastest, path.uncongested_ns);
        }
        c.base_ns = std::max<time_ns>(1, 2 * fastest);
        c.probe_threshold = p.hopper.probe_threshold;
        c.congestion_threshold = p.hopper.congestion_threshold;
        c.probe_ttl = p.hopper.probe_ttl;
        c.ewma_gain = p.hopper.ewma_gain;
        c.switch_margin = p.hopper.switch_margin;
        c.entropies = p.hopper.entropies;
        q.hopper.emplace(c, static_cast<std::uint16_t>(q.entropy % c.entropies)); // a random first path
        q.entropy = q.hopper->current();
        return;
    }
    case scheme::flowbender: {
        const policy::flowbender_config c{p.flowbender.marked_fraction, p.flowbender.rounds, p.flowbender.entropies};
        q.flowbender.emplace(c, static_cast<std::uint16_t>(q.entropy % c.entropies));
        q.entropy = q.flowbender->current();
        return;
    }
    case scheme::rps:
        q.fixed_entropy = false;
        return;
    case scheme::telb:
        for (const auto& rule : p.telb) {
            if (rule.item == f.spec.tag) {
                ++_roce.telb_pinned;
                break;
            }
        }
        return;
    case scheme::selective: {
        const policy::selective_config c{p.selective.elephant_bytes, p.selective.by_sent_bytes
                                                                         ? policy::elephant_rule::sent
                                                                         : policy::elephant_rule::posted};
        const bool marked =
            std::find(p.selective.items.begin(), p.selective.items.end(), f.spec.tag) != p.selective.items.end();
        if (marked || policy::sprays(c, f.spec.bytes, 0)) {
            q.fixed_entropy = false;
            ++_roce.sprayed_flows;
        }
        return;
    }
    default:
        return;
    }
}

void simulation::host_policy_entropy(const flow& f, roce_qp& q, packet& k)
{
    const auto& p = _scenario.roce;
    switch (_scenario.scheme) {
    case scheme::rps:
        q.entropy = static_cast<std::uint16_t>(_lb_rng[f.spec.src].below(0x4000));
        break;
    case scheme::reps: {
        const std::uint32_t explored = q.reps->explored();
        q.entropy = q.reps->on_send(k.psn, _now);
        ++(q.reps->explored() != explored ? _roce.reps_explored : _roce.reps_recycled);
        break;
    }
    case scheme::selective:
        if (q.fixed_entropy && p.selective.by_sent_bytes &&
            policy::sprays({p.selective.elephant_bytes, policy::elephant_rule::sent}, f.spec.bytes, q.sent_bytes)) {
            q.fixed_entropy = false; // it became an elephant
            ++_roce.sprayed_flows;
        }
        if (!q.fixed_entropy) {
            q.entropy = static_cast<std::uint16_t>(_lb_rng[f.spec.src].below(0x4000));
        }
        break;
    case scheme::hopper:
    case scheme::flowbender:
        break; // q.entropy moves on ACKs
    default:
        return; // the QP's own hash
    }
    k.entropy = q.entropy;
    k.hash = roce_hash(f.spec.src, f.spec.dst, entropy_port(q.entropy));
}

void simulation::host_policy_ack(const packet& k, roce_qp& q)
{
    const topology::node_id h = _flows[k.flow].spec.src;
    const time_ns rtt = _now - k.sent_ns;
    if (q.reps) {
        q.reps->on_ack(k.entropy, k.ecn_echo);
    } else if (q.flowbender) {
        if (q.flowbender->on_ack(k.ecn_echo, rtt, _now, _lb_rng[h])) {
            q.entropy = q.flowbender->current();
            ++_roce.flowbender_reroutes;
            ++_roce.path_changes;
        }
    } else if (q.hopper) {
        const auto d = q.hopper->on_rtt(k.entropy, rtt, _now, _lb_rng[h]);
        for (std::uint8_t i = 0; i < d.probes; ++i) {
            hopper_send_probe(k.flow, d.probe[i]);
        }
        if (d.switched) {
            q.entropy = d.entropy;
            // The new path's first packet waits the RTT difference (fewer out-of-order arrivals).
            q.next_avail = std::max(q.next_avail, _now + d.delay_ns);
            ++_roce.hopper_switches;
            ++_roce.path_changes;
        }
    }
}

void simulation::host_policy_timeout(std::uint32_t fid, roce_qp& q)
{
    const topology::node_id h = _flows[fid].spec.src;
    if (q.reps) {
        q.reps->on_timeout(_now); // REPS: a timeout may be a failure: freeze exploration
        ++_roce.reps_freezes;
    } else if (q.flowbender) {
        if (q.flowbender->on_timeout(_lb_rng[h])) {
            q.entropy = q.flowbender->current();
            ++_roce.flowbender_reroutes;
            ++_roce.path_changes;
        }
    } else if (q.hopper) {
        if (q.hopper->on_timeout(_now, _lb_rng[h]).switched) {
            q.entropy = q.hopper->current();
            ++_roce.hopper_switches;
            ++_roce.path_changes;
        }
    }
}

void simulation::hopper_send_probe(std::uint32_t fid, std::uint16_t entropy)
{
    const auto& f = _flows[fid];
    const std::uint32_t i = roce_control(roce_op::probe, packet_class::probe, false, f.spec.src, f.spec.dst, fid);
    packet& k = _packets[i];
    k.ect = true;
    k.entropy = entropy;
    k.sent_ns = _now;
    k.hash = roce_hash(f.spec.src, f.spec.dst, entropy_port(entropy));
    ++_roce.hopper_probes;
    roce_forward(i, f.spec.src);
}

void simulation::hopper_answer(const packet& probe, topology::node_id host)
{
    // In the ACK class: the answer should time the probe's way, not its own.
    const std::uint32_t i =
        roce_control(roce_op::probe_reply, packet_class::probe_ack, true, host, probe.src, probe.flow);
    packet& a = _packets[i];
    a.entropy = probe.entropy;
    a.sent_ns = probe.sent_ns;
    a.hash = mix32(probe.hash ^ 0x5bd1e995u);
    roce_forward(i, host);
}

void simulation::hopper_on_reply(const packet& reply)
{
    auto& q = _qps[reply.flow];
    if (q.active && q.hopper) {
        q.hopper->on_probe(reply.entropy, _now - reply.sent_ns, _now);
    }
}

} // namespace laps::fabric
