#pragma once
// Per-flow state of an engine, sender and receiver side. Flow slots are
// allocated once, at engine start, and recycled: no allocation per flow.

#include "common/time.hpp"
#include "congestion/aimd.hpp"
#include "congestion/pacer.hpp"
#include "pipeline/mbuf_fifo.hpp"
#include "policy/flowbender.hpp"
#include "policy/hopper.hpp"
#include "retransmit/dup_filter.hpp"
#include "retransmit/reorder_buffer.hpp"
#include "retransmit/sender_window.hpp"
#include "tables/path_table.hpp"
#include "tables/table_spec.hpp"
#include "wire/classify.hpp"
#include "wire/header_writer.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory_resource>

namespace laps::pipeline {

// flow_id on the wire, 32 bits, from the top:
//   [worker: worker_bits][slot generation: 12 - worker_bits][slot index: 20]
// The generation makes an ACK for an evicted flow miss the flow that reuses
// its slot; the worker index (worker_bits = ceil(log2(workers)) of the
// sending instance) keeps the flow ids of two workers of one sender apart at
// a receiver, which keys its flows by (sender address, flow_id), and makes an
// ACK that reached the wrong worker miss (ack_drop_unknown_flow) instead of
// matching another flow. It is not the steering tag (docs/wire-format.md):
// a receiver never reads it, so its width is the sender's own business.
inline constexpr unsigned flow_index_bits = 20;
inline constexpr unsigned flow_upper_bits = 32 - flow_index_bits;
inline constexpr std::uint32_t flow_index_mask = (1u << flow_index_bits) - 1;
inline constexpr std::uint32_t max_flow_capacity = 1u << flow_index_bits;

struct flow_id_layout {
    std::uint32_t tag_field = 0;      // the worker index, in place
    std::uint32_t generation_mask = 0; // after shifting down by flow_index_bits

    constexpr flow_id_layout(std::uint8_t worker_bits, std::uint16_t worker) noexcept
        : tag_field(worker_bits == 0 ? 0 : static_cast<std::uint32_t>(worker) << (32 - worker_bits)),
          generation_mask((1u << (flow_upper_bits - worker_bits)) - 1)
    {
    }

    constexpr std::uint32_t make(std::uint32_t index, std::uint16_t generation) const noexcept
    {
        return tag_field | ((generation & generation_mask) << flow_index_bits) | index;
    }
    // Whether `flow_id` names slot `index` at `generation` of this engine.
    constexpr bool matches(std::uint32_t flow_id, std::uint16_t generation) const noexcept
    {
        return flow_id == make(flow_id & flow_index_mask, generation);
    }
};

// Laid out by use, from the start of a line (docs/PERFORMANCE.md §19): the
// first line holds what every packet of the flow reads,
// then the window, the pacer, the host queue and the rate, which a send reads
// all of but the rate's last fields (lines 0-2), and the path timeouts; what
// a flow's creation, eviction or listing reads comes last.
struct alignas(64) send_flow {
    send_flow(std::uint32_t window_packets, const congestion::aimd_params& aimd, std::uint32_t burst_bytes,
              std::pmr::memory_resource* memory)
        : window(window_packets, tables::max_paths_per_destination, memory), pacer(burst_bytes), rate(aimd)
    {
    }

    bool active = false;
    std::uint16_t generation = 0;
    bool in_ready = false;       // queued in the engine's ready list
    bool pace_pending = false;   // a pace or retry timer is in the heap
    std::uint16_t path_pending = 0; // bit per path slot: a timeout entry is in the heap
    // Doublings of the flow's path timeouts: one per timeout, kept until an
    // ACK that times the transmission it answers (its time_echo matches the
    // one the window remembers: Karn's rule, with RFC 7323's way out of its
    // ambiguity), which shows the timeout was long enough (RFC 6298 §5.5-5.7).
    // retransmit.max_timeout_us caps the timeout.
    std::uint8_t backoff = 0;
    // Timeouts in a row with no ACK releasing anything: stalled_timeouts of
    // them and the flow stops holding the host port (engine::from_host).
    std::uint8_t silent_timeouts = 0;
    std::uint32_t host_call = 0; // the from_host call in which it last left a frame with the caller
    std::uint32_t set = 0;       // the destination's path set
    const tables::path_set* paths = nullptr; // that set (stable for the flow's life)
    std::uint32_t fabric_ip = 0; // outer destination
    std::uint32_t hash = 0;      // of the flow key: policy ecmp pins the flow to a path by it
    std::uint16_t tag = 0;       // steering tag in its UDP source ports (docs/wire-format.md)
    std::uint8_t max_anchors = 0; // of its set: its largest LAPS header
    common::time_ns last_active = 0;
    std::uint64_t sent_bytes = 0; // host-frame bytes sent once
    retransmit::sender_window window;
    congestion::pacer pacer;
    mbuf_fifo queue; // host frames not sent yet
    congestion::aimd rate;
    // Per path slot: when its outstanding packets time out (0: nothing outstanding).
    std::array<common::time_ns, tables::max_paths_per_destination> deadline{};
    // Per path slot: its timeouts' doublings, where they are kept per path
    // (send_side::backoff_of; otherwise `backoff` above counts for the flow).
    std::array<std::uint8_t, tables::max_paths_per_destination> path_backoff{};
    // Receiver-paced credits (congestion.cc credit, send_side::credit_allows).
    struct credit_state {
        std::int64_t unscheduled = 0; // bytes it may still send without a credit
        std::uint32_t granted = 0;    // DATA its receiver has granted (the latest CREDIT's count)
        std::uint32_t used = 0;       // DATA sent on a credit
        std::uint32_t pulled = 0;     // credits asked for: sequence numbers up to the latest PULL, and resends'
        std::uint32_t seq_upto = 0;   // sequence numbers asked for
        std::uint32_t window_grants = 0; // what the receiver grants the first request beyond them
        // (a count beyond pulled + window_grants is forged)
        retransmit::seq_t first_seq = 0; // the flow's first sequence number
        common::time_ns waiting_since = -1; // -1: not waiting for a credit
        bool fallback = false;        // waited fallback_ns: sends on its rate alone until a credit comes
        bool timer_pending = false;   // a credit_wait entry is in the heap (stays with the slot)
        bool has_hint = false;        // the latest CREDIT's path is for the next DATA sent on a credit
        tables::path_id hint = 0;
    } credit;
    // What the send and ACK paths use ends here (the engine prefetches up
    // to `key`); the rest is read when a flow is created, evicted or listed.
    wire::flow_key key{};
    // The other seeds' policies (softmax/policy.hpp; pipeline/policies.cpp),
    // after the hot fields: Hopper's and FlowBender's one path (a slot of the
    // set), their state and Hopper's base latency (selective spraying's
    // elephant rule reads sent_bytes, above).
    std::uint8_t pinned_slot = 0;
    bool marked_elephant = false; // selective: its DSCP is one the rule sprays
    common::time_ns hopper_base_ns = 0;
    policy::hopper_state hopper{};
    policy::flowbender bender{};

    bool has_work() const noexcept { return window.lost_pending() > 0 || (!queue.empty() && !window.full()); }
    bool idle() const noexcept { return queue.empty() && window.idle(); }

    // Bytes from the start that the send and ACK paths use (up to `key`).
    static const std::size_t hot_bytes;
};

// offsetof: send_flow is not standard-layout (its members have
// constructors), which GCC supports and warns about.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
inline constexpr std::size_t send_flow::hot_bytes = offsetof(send_flow, key);
static_assert(offsetof(send_flow, window) == 64, "the flow's first line is full: a field added there moves the rest");
static_assert(offsetof(send_flow, rate) + 24 <= 192, "a send reads the rate's pace within the flow's third line");
#pragma GCC diagnostic pop

// Receiver flows are keyed by the sender's address, its flow_id and its
// incarnation (epoch): each incarnation of a sender is a flow of its own, so
// a packet with another epoch (a restarted sender, or a forger who does not
// know the 32 random bits) can neither reset nor end a live flow
// (docs/pipeline.md "Receiver guarantees").
// 16 bytes, the zero padding included: rte_hash compares 16-byte keys with
// one vector compare (rte_hash_k16_cmp_eq), other sizes by a call to memcmp.
struct receive_key {
    std::uint32_t src_ip = 0;
    std::uint32_t flow_id = 0;
    std::uint32_t epoch = 0;
    std::uint32_t owner = 0; // 0 in an engine's own table; its flow_index_tag in a shared one
};
static_assert(sizeof(receive_key) == 16);

struct receive_flow {
    receive_flow(std::uint32_t window_packets, bool in_order, std::pmr::memory_resource* memory)
        : dups(window_packets, memory), reorder(in_order ? window_packets : 2, memory)
    {
    }

    bool active = false;
    bool reorder_pending = false;   // a reorder timeout entry is in the heap
    // Its DATA that arrived, a resend twice (it stands for a lost one): how
    // far its credits may run ahead (pipeline/credits.cpp). Counted for
    // every flow, whatever this engine's variant (a sender under `credit`
    // may ask any receiver), in the first line, which every DATA touches.
    std::uint32_t arrived = 0;
    common::time_ns last_active = 0;
    common::time_ns held_since = 0; // frames held behind a gap since (in order)
    retransmit::dup_filter dups;
    retransmit::reorder_buffer reorder;
    // Receiver-paced credits (pipeline/credits.cpp): the DATA that asked
    // for a credit and the credits granted (the count a CREDIT carries), and
    // per receiving port whether the flow can be sent a credit there: the
    // latest DATA that asked there gives the credit's route (its path: the
    // hint) and what one credit calls onto the port (its wire length).
    struct credit_port {
        bool routed = false;
        bool queued = false; // in the port's pacer (stays with the slot)
        std::uint32_t pull_bytes = 0;
        wire::credit_route route;
    };
    std::uint32_t pulls = 0;   // credits owed in all: sequence numbers asked for, resends', the window
    std::uint32_t seq_upto = 0; // sequence numbers asked for
    std::uint32_t granted = 0;
    std::uint32_t credit_start = 0; // the flow's first sequence number
    std::uint32_t window_grants = 0; // credits its first request was granted besides (the window)
    std::array<credit_port, congestion::max_credit_ports> credit_ports{};
};

} // namespace laps::pipeline
