#pragma once
// Engine counters: one field per event, named `<stage>_<what>` so the
// console, telemetry and testbed print them by the same names. Every drop
// has its own counter (grout style); nothing is lost silently.
//
// The list is an X-macro so that a counter's field, name and help text are
// written once. H marks the counters that every DATA or ACK moves: they are
// laid out first, in two lines of their own (every other counter follows),
// while the list's order stays the order they are shown in.

#include "common/counter_info.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace laps::pipeline {

#define LAPS_ENGINE_COUNTERS(X, H)                                                                                     \
    /* host -> engine */                                                                                             \
    H(host_rx, "frames taken from the host")                                                                         \
    X(host_backpressure, "times a flow's queue was full and its frames were left with the caller (other flows' taken)")\
    X(host_drop_flow_stalled, "host frames dropped for a full flow with no ACK through several timeouts (stalled)")   \
    X(host_passthrough_non_ip, "non-IP host frames sent to the fabric unchanged")                                    \
    X(host_drop_non_ip, "non-IP host frames (ARP, LLDP, ...) dropped (engine.non_ip: drop)")                         \
    X(host_passthrough_link_local, "host frames to a link-local or link-scope multicast address, sent unchanged")    \
    X(host_drop_link_local, "host frames to a link-local or link-scope multicast address, dropped (engine.link_local: drop)")\
    X(host_passthrough_unknown_dst, "host frames to a destination not in the PST, sent unchanged")                  \
    X(host_drop_unknown_dst, "host frames to a destination not in the PST, dropped (policy drop)")                 \
    X(host_drop_malformed, "host frames whose IP headers failed classification")                                    \
    X(host_drop_oversize, "host frames too large for the fabric MTU once encapsulated (policy drop)")              \
    X(host_passthrough_oversize, "host frames too large for the fabric MTU, sent unchanged (policy pass)")           \
    X(host_drop_flow_table_full, "host frames of a new flow while the flow table was full")                         \
    /* sender */                                                                                                      \
    X(flow_created, "sender flows created")                                                                          \
    X(flow_evicted_idle, "sender flows removed after being idle")                                                    \
    X(flow_removed_with_destination, "sender flows torn down because their destination was deleted")               \
    X(data_drop_destination_removed, "host frames freed, queued or in flight, when their destination was deleted") \
    H(data_sent, "DATA packets sent (first transmissions)")                                                          \
    X(data_resent, "DATA packets sent again after a loss")                                                           \
    H(data_bytes_sent, "host-frame bytes sent in DATA packets, first transmissions")                                \
    X(send_no_path, "times a flow had data but no valid path; it waits")                                           \
    H(send_paced, "times a flow waited for its pacer")                                                               \
    X(send_window_full, "host frames queued behind a full window of packets in flight (they wait for ACKs)")                    \
    X(send_drop_encap, "host frames dropped because encapsulation failed (no header mbuf, MTU)")                   \
    H(send_chained, "first transmissions behind a header mbuf: the host frame was shared, segmented or short of headroom")\
    X(probe_sent, "PROBE packets sent (Alg. 1)")                                                                      \
    X(probe_drop_no_mbuf, "probes not sent: control mempool empty")                                                 \
    /* sender, ACK side */                                                                                            \
    H(ack_rx, "ACKs received: answers to DATA, one per DATA answered (an ACK_RUN counts each of its answers)")        \
    X(ack_coalesced_rx, "ACK_RUN packets received (coalesced ACKs)")                                                 \
    X(ack_drop_unknown_pid, "ACKs for a pid with no PIT row")                                                        \
    X(ack_drop_unknown_flow, "ACKs for a flow this engine does not have (evicted, or never sent)")                 \
    X(ack_drop_wrong_destination, "ACKs whose pid does not lead to the flow's destination")                         \
    X(ack_duplicate, "ACKs for one of the last window of packets released (a late copy): nothing changed")         \
    X(ack_unknown_seq, "ACKs for a sequence number neither in the window nor just behind it: nothing changed")     \
    X(ack_wrong_path, "ACKs naming a path their packet was never sent on: nothing changed")                         \
    H(loss_by_gap, "packets found lost by an ACK skipping them on their path (Alg. 3)")                            \
    X(loss_by_timeout, "packets found lost by their path's timeout (Alg. 3; RFC 6298 RTO when larger)")           \
    X(timeout_backoff, "path timeouts in a row before an ACK timed its transmission: each makes the next twice as long")\
    X(loss_spurious, "packets declared lost that were delivered after all")                                        \
    H(aimd_decrease, "AIMD rate decreases (Alg. 2)")                                                                \
    H(aimd_increase, "AIMD linear increases")                                                                        \
    X(aimd_hyper_increase, "AIMD increases that doubled expRate")                                                  \
    X(policy_repaths, "flows moved to another path by policy hopper, flowbender or selective (a mouse)")                                \
    X(probe_ack_rx, "PROBE_ACKs received")                                                                          \
    X(probe_ack_drop_unknown_pid, "PROBE_ACKs for a pid with no PIT row")                                          \
    /* receiver */                                                                                                    \
    H(fabric_rx, "packets taken from the fabric")                                                                    \
    X(fabric_passthrough_foreign, "fabric packets that are not LAPS, handed to the host unchanged")                \
    X(fabric_drop_malformed, "LAPS packets that failed validation (see parse_* counters)")                         \
    X(fabric_drop_unauthenticated, "LAPS packets without a valid tag while a key is set (auth): dropped")           \
    X(fabric_drop_replayed, "authenticated LAPS packets seen before or too old for their sender's replay window")   \
    X(fabric_drop_auth_peers_full, "authenticated packets of a new sender while the replay table was full of active ones")\
    X(auth_peer_evicted, "replay windows of senders quiet for auth_peer_idle forgotten to make room")               \
    H(data_rx, "DATA packets received")                                                                              \
    X(data_drop_duplicate, "DATA packets received twice: ACKed and dropped")                                        \
    X(data_drop_beyond_window, "DATA packets too far ahead of the flow's window: dropped, not ACKed")              \
    X(data_drop_flow_table_full, "DATA packets of a new flow while the receiver flow table was full")             \
    X(data_drop_decap, "DATA packets whose headers could not be removed (not in the first segment)")              \
    H(data_delivered, "host frames delivered to the host")                                                          \
    H(data_bytes_delivered, "bytes of host frames delivered")                                                       \
    H(ack_sent, "ACKs sent: answers to DATA, one per DATA answered (an ACK_RUN counts each of its answers)")           \
    X(ack_coalesced_sent, "ACK_RUN packets sent (coalesced ACKs, engine acks)")                                      \
    X(ack_drop_no_mbuf, "ACKs not sent: control mempool empty")                                                     \
    X(probe_rx, "PROBE packets received and answered")                                                               \
    X(probe_ack_drop_no_mbuf, "PROBE_ACKs not sent: control mempool empty")                                         \
    X(receiver_flow_created, "receiver flows created")                                                               \
    X(receiver_gap_acknowledged, "gaps a receiver flow stopped waiting for: its sender had them acknowledged (seq - window_offset), by an earlier run of this receiver") \
    X(receiver_flow_evicted_idle, "receiver flows removed after being idle")                                        \
    X(receiver_flow_evicted_pressure, "receiver flows quiet for flow_idle removed early to make room for a new flow") \
    H(reorder_held_max, "most host frames held in one flow's reorder buffer (Fig. 20)")                            \
    /* outputs */                                                                                                     \
    X(to_fabric_drop_full, "packets dropped because the to-fabric staging was full (shell did not drain)")        \
    X(to_host_drop_full, "frames dropped because the to-host staging was full (shell did not drain)")             \
    /* steering */                                                                                                    \
    X(fabric_rx_wrong_worker, "LAPS packets whose steering tag names another worker (misconfigured steering)")        \
    /* trust (docs/pipeline.md "Receiver guarantees") */                                                              \
    X(ack_drop_stale_epoch, "ACKs echoing another incarnation (epoch) of this sender: nothing changed")               \
    X(ack_drop_implausible_latency, "ACK/PROBE_ACK latencies above max_latency once the clock offset is removed: not recorded")\
    X(probe_ack_drop_unexpected, "PROBE_ACKs for no probe outstanding on their path, or with probing off: ignored")   \
    H(data_acked, "host frames whose DATA was acknowledged and released")                                             \
    X(data_drop_bad_window_offset, "DATA that would start a flow with window_offset beyond the duplicate window: dropped, not ACKed")\
    /* bounded holding */                                                                                             \
    X(reorder_timeout, "times a flow gave up waiting for a gap after engine.reorder_timeout")                         \
    X(reorder_hold_limit, "times the longest-waiting flow gave up its gap because reorder_hold_max frames were held") \
    X(reorder_drop_timeout, "frames held behind a gap dropped at the reorder timeout (action drop)")                  \
    /* receiver-paced credits (congestion.cc credit, docs/congestion.md) */                                           \
    X(credit_pull_sent, "DATA sent asking its receiver for a credit (flag pull)")                                     \
    X(credit_wait, "times a flow of cc credit had data but neither unscheduled bytes nor a credit left; it waits")    \
    X(credit_fallback, "times a flow of cc credit waited fallback_us without a credit and went on at its rate alone") \
    X(credit_rx, "CREDIT packets received")                                                                           \
    X(credit_taken, "CREDIT packets that granted their flow more DATA")                                                \
    X(credit_stale, "CREDIT packets granting no more than an earlier one (reordered or repeated): nothing changed")   \
    X(credit_drop_unknown_pid, "CREDIT packets for a pid with no PIT row")                                           \
    X(credit_drop_stale_epoch, "CREDIT packets echoing another incarnation (epoch) of this sender")                  \
    X(credit_drop_unknown_flow, "CREDIT packets for a flow this engine does not have, or whose pid leads elsewhere") \
    X(credit_drop_beyond_request, "CREDIT packets granting more DATA than the flow asked for: forged, ignored")      \
    X(credit_pull_rx, "DATA received asking for a credit (flag pull)")                                                 \
    X(credit_sent, "CREDIT packets sent")                                                                              \
    X(credit_drop_no_mbuf, "CREDIT packets not built: control mempool empty (the credit stays owed)")       \
    X(credit_port_charged, "packets other than DATA that put a busy port's next credit back by their length")        \
    X(credit_held, "credit turns passed over: the flow's credits a window ahead of its DATA arrived")                 \
    X(data_delivered_late, "frames of a given-up gap delivered when they arrived (out of order)")                     \
    /* clock offset estimate (tables/clock_offset.hpp) */                                                             \
    X(clock_offset_seeded, "clock offset estimates started (first sample of a destination)")                          \
    X(clock_step_back, "clock offset estimates re-seeded by a sample far below (receiver clock set back)")            \
    X(clock_step_forward, "clock offset estimates re-seeded by samples far above in a row (clock set forward)")       \
    X(clock_offset_expired, "clock offset estimates re-based when their base aged out of the window")                 \
    X(clock_skew_updates, "clock skew estimates updated from bucket minima")                                          \
    X(clock_offset_raised, "clock offset estimates raised to an ACK's round-trip floor (a receiver clock ahead)")     \
    /* freed at stop (engine::release_all) */                                                                         \
    X(stop_free_queued, "host frames queued in flows, freed at stop")                                                 \
    X(stop_free_in_flight, "host frames sent but not acknowledged, freed at stop")                                    \
    X(stop_free_held, "frames held for in-order delivery, freed at stop")                                             \
    X(stop_free_staged, "packets staged for the shell and never taken, freed at stop")

struct engine_counters {
#define LAPS_COUNTER_FIELD(name, help) std::uint64_t name = 0;
#define LAPS_COUNTER_SKIP(name, help)
    LAPS_ENGINE_COUNTERS(LAPS_COUNTER_SKIP, LAPS_COUNTER_FIELD) // the hot ones
    LAPS_ENGINE_COUNTERS(LAPS_COUNTER_FIELD, LAPS_COUNTER_SKIP) // the others
#undef LAPS_COUNTER_SKIP
#undef LAPS_COUNTER_FIELD
};
static_assert(offsetof(engine_counters, host_backpressure) == 128, "the hot counters fill the first two lines");

inline constexpr std::array engine_counter_list{
#define LAPS_COUNTER_INFO(name, help) common::counter_info<engine_counters>{#name, help, &engine_counters::name},
    LAPS_ENGINE_COUNTERS(LAPS_COUNTER_INFO, LAPS_COUNTER_INFO)
#undef LAPS_COUNTER_INFO
};

// A counter that is a high-water mark, not a count: over several engines it
// is the largest, not the sum.
constexpr bool is_maximum(std::string_view name) noexcept
{
    return name == "reorder_held_max";
}

// Adds one engine's counters to a total over engines (workers, hosts).
inline void accumulate(engine_counters& total, const engine_counters& one) noexcept
{
    for (const auto& c : engine_counter_list) {
        if (is_maximum(c.name)) {
            total.*c.field = std::max(total.*c.field, one.*c.field);
        } else {
            total.*c.field += one.*c.field;
        }
    }
}

} // namespace laps::pipeline
