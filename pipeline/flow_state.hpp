#pragma once
// Per-flow state of an engine, sender and receiver side. Flow slots are
// allocated once, at engine start, and recycled: no allocation per flow.

#include "common/time.hpp"
#include "congestion/aimd.hpp"
#include "congestion/pacer.hpp"
#include "pipeline/mbuf_fifo.hpp"
#include "retransmit/dup_filter.hpp"
#include "retransmit/reorder_buffer.hpp"
#include "retransmit/sender_window.hpp"
#include "tables/table_spec.hpp"
#include "wire/classify.hpp"

#include <array>
#include <cstdint>

namespace laps::pipeline {

// flow_id on the wire: slot index in the low bits, the slot's generation in
// the high bits, so an ACK for an evicted flow never reaches the flow that
// reuses its slot.
inline constexpr unsigned flow_index_bits = 20;
inline constexpr std::uint32_t flow_index_mask = (1u << flow_index_bits) - 1;
inline constexpr std::uint32_t max_flow_capacity = 1u << flow_index_bits;

constexpr std::uint32_t make_flow_id(std::uint32_t index, std::uint16_t generation) noexcept
{
    return (static_cast<std::uint32_t>(generation) << flow_index_bits) | index;
}

struct send_flow {
    send_flow(std::uint32_t window_packets, const congestion::aimd_params& aimd, double burst_bytes)
        : rate(aimd), pacer(burst_bytes), window(window_packets, tables::max_paths_per_destination)
    {
    }

    bool active = false;
    std::uint16_t generation = 0;
    bool in_ready = false;       // queued in the engine's ready list
    bool pace_pending = false;   // a pace or retry timer is in the heap
    std::uint16_t path_pending = 0; // bit per path slot: a timeout entry is in the heap
    std::uint32_t set = 0;       // the destination's path set
    std::uint32_t fabric_ip = 0; // outer destination
    std::uint32_t hash = 0;      // of the flow key: policy ecmp pins the flow to a path by it
    common::time_ns last_active = 0;
    wire::flow_key key{};
    congestion::aimd rate;
    congestion::pacer pacer;
    retransmit::sender_window window;
    mbuf_fifo queue; // host frames not sent yet
    // Per path slot: when its outstanding packets time out (0: nothing outstanding).
    std::array<common::time_ns, tables::max_paths_per_destination> deadline{};

    bool has_work() const noexcept { return window.lost_pending() > 0 || (!queue.empty() && !window.full()); }
    bool idle() const noexcept { return queue.empty() && window.idle(); }
};

// Receiver flows are keyed by the sender's address and its flow_id.
struct receive_key {
    std::uint32_t src_ip = 0;
    std::uint32_t flow_id = 0;
};

struct receive_flow {
    receive_flow(std::uint32_t window_packets, bool in_order)
        : dups(window_packets), reorder(in_order ? window_packets : 2)
    {
    }

    bool active = false;
    common::time_ns last_active = 0;
    retransmit::dup_filter dups;
    retransmit::reorder_buffer reorder;
};

} // namespace laps::pipeline
