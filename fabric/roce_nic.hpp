#pragma once
// The RoCEv2 NIC model that hosts run under the baseline schemes (scheme.hpp),
// beside the LAPS engine. One QP per testbed flow; PSNs are frame indices
// (the same application bytes per packet as the LAPS runs).
//
//   sender  : QPs served round-robin whenever the host's ports have room (the
//             NIC's TX scheduler pulls from QPs, so a host never queues more
//             than a couple of its own packets per port); each QP paced at its
//             DCQCN (or DCTCP) rate; Go-Back-N (or IRN) recovery; an RTO.
//   receiver: ACK per DATA packet (L2_ACK_INTERVAL 1), NACK on a gap (at most
//             one per nack_interval for the same gap), a CNP flag at most once
//             per np_interval per QP for CE-marked DATA (DCQCN's notification
//             point), ECN echo on every ACK (DCTCP).
//
// Wire sizes: DATA = payload + 58 bytes (Ethernet 14, IPv4 20, UDP 8, BTH 12,
// ICRC 4), ACK/NACK 62 (+ AETH 4), ConWeave control 64. The payload per packet
// is the host frame's (fabric.frame_bytes - 42), so a flow has as many packets
// as under LAPS; LAPS's encapsulation is 86 bytes on top of the 42.
//
// The state here is plain data; the event handling is in roce_loop.cpp.

#include "common/time.hpp"
#include "fabric/dcqcn.hpp"
#include "fabric/roce_params.hpp"
#include "policy/flowbender.hpp"
#include "policy/hopper.hpp"
#include "policy/reps.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace laps::fabric {

inline constexpr std::uint32_t roce_data_overhead = 58;
inline constexpr std::uint32_t roce_ack_bytes = 62;
inline constexpr std::uint32_t roce_ctl_bytes = 64;
inline constexpr std::uint16_t roce_udp_port = 4791;
inline constexpr std::uint16_t no_pid = 0xffff;

enum class roce_timer : std::uint8_t { rto, decrease, increase, count_ };

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
    double line_bps = 0;
    time_ns next_avail = 0;     // pacing: may send at or after this
    std::uint32_t last_bytes = 0;
    time_ns last_sent = 0;
    std::uint64_t window_packets = 0; // 0: no window
    bool dctcp = false;
    dcqcn_rp dcqcn;
    dctcp_cc dctcp_state;

    // Path (PLB's is chosen here; the switch-side schemes keep theirs in lb state).
    std::uint16_t pid = no_pid;
    std::uint32_t congested_rounds = 0;
    bool plb_paused = false;

    // Host-side path policies of the other seeds (policy/): the entropy of
    // the next DATA packet's UDP source port, and the policy choosing it.
    std::uint16_t entropy = 0;
    bool fixed_entropy = true; // every packet on `entropy` (ECMP, FlowBender, Hopper, selective mice)
    std::optional<policy::reps> reps;
    std::optional<policy::hopper> hopper;
    std::optional<policy::flowbender> flowbender;
    std::uint64_t sent_bytes = 0;

    // IRN: PSNs the receiver reported (SACK), the recovery window.
    std::vector<std::uint64_t> sacked;
    bool recovery = false;
    std::uint32_t recovery_end = 0; // snd_nxt when recovery began
    std::uint32_t retx_next = 0;    // next PSN to examine for a resend in recovery
    std::uint32_t high_sack = 0;    // one past the highest SACKed PSN: below it, holes are losses

    // Timers: the pending event's generation per kind (a newer one supersedes).
    std::array<std::uint32_t, static_cast<std::size_t>(roce_timer::count_)> gen{};
    time_ns rto_deadline = no_time; // lazily re-armed: one RTO event in flight per QP
    bool rto_event = false;

    double rate_bps() const noexcept { return dctcp ? dctcp_state.rate_bps() : dcqcn.rate_bps(); }
    bool finished() const noexcept { return snd_una >= frames; }
    bool is_sacked(std::uint32_t psn) const noexcept
    {
        return !sacked.empty() && (sacked[psn / 64] >> (psn % 64) & 1u) != 0;
    }
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

// One host's NIC scheduler.
struct roce_nic {
    std::vector<std::uint32_t> active; // QPs with something to send, in start order (round robin)
    std::size_t rr = 0;
    time_ns wake_at = no_time;
    std::uint32_t own_queued = 0;      // DATA this NIC queued on its ports, not yet on the wire
    std::vector<std::uint64_t> packets_per_pid; // DATA sent per candidate path (Fig. 19)
};

// Counters of the RoCE hosts and the switch-side schemes, summed over the run.
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
    std::uint64_t path_changes = 0;     // a flow's packets moved to another candidate path
    std::uint64_t flowlets = 0;         // new flowlets (LetFlow, CONGA)
    std::uint64_t plb_repaths = 0;
    std::uint64_t plb_rounds = 0;       // DCTCP rounds PLB looked at
    std::uint64_t plb_congested = 0;    // of which congested (>= congested_fraction ECN)
    std::uint64_t conga_feedback = 0;   // congestion-to-leaf updates carried back
    std::uint64_t cw_reroutes = 0;      // ConWeave: reply timeouts that moved a flow
    std::uint64_t cw_replies = 0;       // RTT_REPLY + CLEAR sent by destination ToRs
    std::uint64_t cw_notifies = 0;      // NOTIFY sent (ECN on a path)
    std::uint64_t cw_held = 0;          // DATA held in a destination ToR's reorder queue
    std::uint64_t cw_held_max = 0;      // most DATA one flow's reorder queue held at once
    std::uint64_t cw_flush_by_tail = 0; // reorder queues released by their TAIL
    std::uint64_t cw_flush_by_timer = 0; // released by the flush timer (TAIL late or lost)
    std::uint64_t reps_recycled = 0;    // REPS: DATA sent on an entropy an unmarked ACK returned
    std::uint64_t reps_explored = 0;    // REPS: DATA sent on a new entropy
    std::uint64_t reps_freezes = 0;     // REPS: timeouts that froze exploration
    std::uint64_t hopper_probes = 0;    // Hopper: probes sent
    std::uint64_t hopper_switches = 0;  // Hopper: moves to a probed path
    std::uint64_t flowbender_reroutes = 0;
    std::uint64_t sprayed_flows = 0;    // selective: flows classified as elephants (sprayed)
    std::uint64_t telb_pinned = 0;      // TELB: flows a policy rule pinned
    std::uint64_t glb_heartbeats = 0;   // GLB: link-quality advertisements taken
    std::uint64_t reunion_elephants = 0; // Reunion: flows the CMS classified as elephants
    std::uint64_t reunion_marks = 0;    // Reunion: elephant DATA marked with a bottleneck link
    std::uint64_t reunion_notifies = 0; // Reunion: notifications sent by destination switches
    std::uint64_t reunion_reroutes = 0; // Reunion: elephants moved by their source switch
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
    roce_counter_info{"path_changes", &roce_counters::path_changes},
    roce_counter_info{"flowlets", &roce_counters::flowlets},
    roce_counter_info{"plb_repaths", &roce_counters::plb_repaths},
    roce_counter_info{"plb_rounds", &roce_counters::plb_rounds},
    roce_counter_info{"plb_congested", &roce_counters::plb_congested},
    roce_counter_info{"conga_feedback", &roce_counters::conga_feedback},
    roce_counter_info{"cw_reroutes", &roce_counters::cw_reroutes},
    roce_counter_info{"cw_replies", &roce_counters::cw_replies},
    roce_counter_info{"cw_notifies", &roce_counters::cw_notifies},
    roce_counter_info{"cw_held", &roce_counters::cw_held},
    roce_counter_info{"cw_held_max", &roce_counters::cw_held_max},
    roce_counter_info{"cw_flush_by_tail", &roce_counters::cw_flush_by_tail},
    roce_counter_info{"cw_flush_by_timer", &roce_counters::cw_flush_by_timer},
    roce_counter_info{"reps_recycled", &roce_counters::reps_recycled},
    roce_counter_info{"reps_explored", &roce_counters::reps_explored},
    roce_counter_info{"reps_freezes", &roce_counters::reps_freezes},
    roce_counter_info{"hopper_probes", &roce_counters::hopper_probes},
    roce_counter_info{"hopper_switches", &roce_counters::hopper_switches},
    roce_counter_info{"flowbender_reroutes", &roce_counters::flowbender_reroutes},
    roce_counter_info{"sprayed_flows", &roce_counters::sprayed_flows},
    roce_counter_info{"telb_pinned", &roce_counters::telb_pinned},
    roce_counter_info{"glb_heartbeats", &roce_counters::glb_heartbeats},
    roce_counter_info{"reunion_elephants", &roce_counters::reunion_elephants},
    roce_counter_info{"reunion_marks", &roce_counters::reunion_marks},
    roce_counter_info{"reunion_notifies", &roce_counters::reunion_notifies},
    roce_counter_info{"reunion_reroutes", &roce_counters::reunion_reroutes},
};

} // namespace laps::fabric
