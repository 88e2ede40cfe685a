#pragma once
// The RoCEv2 NIC model that hosts run under every scheme but laps
// (fabric/schemes/registry.hpp). One QP per testbed flow; PSNs are frame
// indices (the same application bytes per packet as the LAPS runs).
//
//   sender  : QPs served round-robin whenever the host's ports have room (the
//             NIC's TX scheduler pulls from QPs, so a host never queues more
//             than a couple of its own packets per port); each QP paced at its
//             DCQCN (or DCTCP) rate; Go-Back-N (or IRN) recovery; an RTO.
//   receiver: ACK per DATA packet (L2_ACK_INTERVAL 1), NACK on a gap (at most
//             one per nack_interval for the same gap), a CNP flag at most once
//             per np_interval per QP for CE-marked DATA (DCQCN's notification
//             point), ECN echo on every ACK (DCTCP); answers probes.
//
// Wire sizes: DATA = payload + 58 bytes (Ethernet 14, IPv4 20, UDP 8, BTH 12,
// ICRC 4), ACK/NACK 62 (+ AETH 4), control messages 64. The payload per
// packet is the host frame's (fabric.frame_bytes - 42), so a flow has as many
// packets as under LAPS; LAPS's encapsulation is 86 bytes on top of the 42.
//
// The state here is plain data; the event handling is in roce_hosts.hpp.

#include "common/time.hpp"
#include "fabric/forwarding.hpp"
#include "fabric/host.hpp"
#include "fabric/hosts/dcqcn.hpp"
#include "fabric/packet.hpp"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace laps::fabric::hosts {

inline constexpr std::uint32_t roce_data_overhead = 58;
inline constexpr std::uint32_t roce_ack_bytes = 62;
inline constexpr std::uint32_t roce_ctl_bytes = 64;
inline constexpr std::uint16_t roce_udp_port = 4791;
inline constexpr std::uint16_t no_pid = 0xffff;

enum class roce_timer : std::uint8_t { rto, decrease, increase, count_ };

// IRN's sender state of a QP: PSNs the receiver reported (SACK), the
// recovery window. Go-Back-N never enters recovery.
struct irn_sender {
    std::vector<std::uint64_t> sacked;
    bool recovery = false;
    std::uint32_t recovery_end = 0; // snd_nxt when recovery began
    std::uint32_t retx_next = 0;    // next PSN to examine for a resend in recovery
    std::uint32_t high_sack = 0;    // one past the highest SACKed PSN: below it, holes are losses

    bool is_sacked(std::uint32_t psn) const noexcept
    {
        return !sacked.empty() && (sacked[psn / 64] >> (psn % 64) & 1u) != 0;
    }
};

// Sender state of one QP (= one testbed flow).
struct roce_qp {
    bool active = false;        // started, not yet fully acknowledged
    std::uint32_t frames = 0;   // PSNs 0..frames-1
    std::uint32_t snd_una = 0;  // first PSN not acknowledged
    std::uint32_t snd_nxt = 0;  // next PSN to send
    std::uint32_t max_sent = 0; // one past the highest PSN ever sent (resends are below it)
    std::uint32_t first_resend = 0xffffffffu; // PSN of the first resend (where recovery began)
    std::uint16_t sport = 0;    // UDP source port: RoCEv2 QP entropy
    std::uint32_t hash = 0;     // 5-tuple hash (ECMP)
    // The entropy of the QP (the low bits of its UDP source port); a
    // host-side scheme moves it, and puts it in each DATA packet it steers.
    std::uint16_t entropy = 0;
    double line_bps = 0;
    time_ns next_avail = 0;     // pacing: may send at or after this
    std::uint32_t last_bytes = 0;
    time_ns last_sent = 0;
    std::uint64_t sent_bytes = 0;
    std::uint64_t window_packets = 0; // 0: no window
    bool dctcp = false;
    dcqcn_rp dcqcn;
    dctcp_cc dctcp_state;

    irn_sender irn;

    // Timers: the pending event's generation per kind (a newer one supersedes).
    std::array<std::uint32_t, static_cast<std::size_t>(roce_timer::count_)> gen{};
    time_ns rto_deadline = no_time; // lazily re-armed: one RTO event in flight per QP
    bool rto_event = false;

    double rate_bps() const noexcept { return dctcp ? dctcp_state.rate_bps() : dcqcn.rate_bps(); }
    bool finished() const noexcept { return snd_una >= frames; }
};

// Receiver state of one QP.
struct roce_rx {
    std::uint32_t expected = 0;      // next in-order PSN
    time_ns nack_timer = 0;          // no repeat NACK for the same gap before this
    std::uint32_t last_nack = 0xffffffffu;
    time_ns last_cnp = -1;           // -1: none yet
    std::vector<std::uint64_t> received; // IRN: PSNs at or beyond `expected` already here
    std::uint32_t held = 0;          // IRN: out-of-order PSNs held (for the reorder statistics)
};

// One host's NIC scheduler (its DATA queued on the ports: node_state::nic_queued).
struct roce_nic {
    std::vector<std::uint32_t> active; // QPs with something to send, in start order (round robin)
    std::size_t rr = 0;
    time_ns wake_at = no_time;
    std::vector<std::uint64_t> packets_per_pid; // DATA sent per candidate path (Fig. 19)
};

// Counters of the RoCE NICs, summed over the run (the scheme's own are the
// scheme's: fabric/schemes/).
struct roce_counters {
    std::uint64_t data_sent = 0;        // DATA packets, first sends and resends
    std::uint64_t data_resent = 0;      // resends (PSN below the highest sent)
    std::uint64_t acks_sent = 0;
    std::uint64_t nacks_sent = 0;
    std::uint64_t cnps_sent = 0;        // CNP flags set by notification points
    std::uint64_t ecn_echoes = 0;       // ACKs echoing a CE mark
    std::uint64_t rate_decreases = 0;   // DCQCN cuts (or DCTCP cuts)
    std::uint64_t rate_increases = 0;
    std::uint64_t go_back = 0;          // NACKs that rewound a sender (Go-Back-N) or started IRN recovery
    std::uint64_t timeouts = 0;         // RTOs that fired with data outstanding
    std::uint64_t rx_out_of_order = 0;  // DATA beyond the expected PSN at a receiver
    std::uint64_t rx_duplicates = 0;    // DATA below it (already delivered)
};

struct roce_counter_info {
    std::string_view name;
    std::uint64_t roce_counters::*field;
};

inline constexpr std::array roce_counter_list{
    roce_counter_info{"data_sent", &roce_counters::data_sent},
    roce_counter_info{"data_resent", &roce_counters::data_resent},
    roce_counter_info{"acks_sent", &roce_counters::acks_sent},
    roce_counter_info{"nacks_sent", &roce_counters::nacks_sent},
    roce_counter_info{"cnps_sent", &roce_counters::cnps_sent},
    roce_counter_info{"ecn_echoes", &roce_counters::ecn_echoes},
    roce_counter_info{"rate_decreases", &roce_counters::rate_decreases},
    roce_counter_info{"rate_increases", &roce_counters::rate_increases},
    roce_counter_info{"go_back", &roce_counters::go_back},
    roce_counter_info{"timeouts", &roce_counters::timeouts},
    roce_counter_info{"rx_out_of_order", &roce_counters::rx_out_of_order},
    roce_counter_info{"rx_duplicates", &roce_counters::rx_duplicates},
};

// The outer 5-tuple hash of a RoCEv2 packet from `src` to `dst` with UDP
// source port `sport` (what the switches' ECMP hashes).
inline std::uint32_t roce_hash(const host_info& src, const host_info& dst, std::uint16_t sport) noexcept
{
    return mix32(src.ipv4 ^ mix32(dst.ipv4 ^ mix32((std::uint32_t{sport} << 16 | roce_udp_port) ^ 17u)));
}

// A UDP source port carrying `entropy` (RoCEv2: 0xC000 and 14 bits).
constexpr std::uint16_t entropy_port(std::uint32_t entropy) noexcept
{
    return static_cast<std::uint16_t>(0xc000u | (entropy & 0x3fffu));
}

// A new control record of `roce_ctl_bytes` (probes, their answers, a
// scheme's switch messages): its index. May move other records.
inline std::uint32_t new_control(packet_pool& packets, roce_op op, packet_class cls, bool priority,
                                 topology::node_id src, topology::node_id dst, std::uint32_t flow)
{
    const std::uint32_t i = packets.alloc();
    packet& c = packets[i];
    c.kind = carrier::roce;
    c.cls = cls;
    c.roce.op = op;
    c.priority = priority;
    c.bytes = roce_ctl_bytes;
    c.roce.src = src;
    c.dst = dst;
    c.flow = flow;
    return i;
}

} // namespace laps::fabric::hosts
