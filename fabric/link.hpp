#pragma once
// One direction of a full-duplex link: the output port of the node at its
// near end, with its queue, its state (up, blackholed, lossy) and its
// counters. Port p of link l is 2l (a -> b) or 2l + 1 (b -> a).

#include "common/rng.hpp"
#include "common/time.hpp"
#include "fabric/port_queue.hpp"
#include "topology/model.hpp"

#include <array>
#include <cstdint>
#include <string_view>

namespace laps::fabric {

using common::time_ns;
using port_id = std::uint32_t;
inline constexpr port_id no_port = 0xffffffffu;

constexpr port_id port_of(topology::link_id link, bool from_b) noexcept
{
    return 2 * link + (from_b ? 1 : 0);
}

// Why the fabric dropped a packet. Every drop is counted under one of these.
enum class drop_reason : std::uint8_t {
    queue_full,    // DropTail: the port's queue for the packet's class is full
    shared_buffer, // the switch's shared buffer is full
    link_down,     // queued on, sent to or crossing a link that went down
    blackhole,     // a link that silently discards everything
    random_loss,   // the link's random loss
    fcs_error,     // corrupted on the link: the receiving port drops it
    no_route,      // no next hop (unknown destination or anchor, not IPv4)
    no_mbuf,       // the receiving NIC had no mbuf for the copy
    hop_limit,     // forwarded more than 64 times (a routing loop)
    count_,
};
inline constexpr std::size_t drop_reason_count = static_cast<std::size_t>(drop_reason::count_);

constexpr std::string_view to_string(drop_reason r) noexcept
{
    constexpr std::array<std::string_view, drop_reason_count> names{
        "queue_full", "shared_buffer", "link_down", "blackhole", "random_loss",
        "fcs_error",  "no_route",      "no_mbuf",   "hop_limit"};
    return names[static_cast<std::size_t>(r)];
}

struct port_counters {
    // Touched by every packet (the first cache line): kept together.
    std::uint64_t packets = 0;      // left the port onto the wire
    std::uint64_t bytes = 0;
    std::uint64_t data_packets = 0; // LAPS DATA among them
    std::uint64_t data_bytes = 0;
    // Integral of queued bytes over time (byte x ns), for the mean queue.
    double queue_byte_ns = 0;
    time_ns busy_ns = 0; // time spent serialising
    std::uint64_t max_queue_bytes = 0;     // data class, queued + in service: what the limit bounds
    std::uint64_t max_priority_bytes = 0;  // ACK class
    // The rest: marks, drops, PFC.
    std::uint64_t ce_marked = 0;
    std::array<std::uint64_t, drop_reason_count> drops{};
    std::uint64_t pauses = 0; // PFC pauses this port received
    time_ns paused_ns = 0;    // time its data class spent paused
};

// The fields every packet touches come first and fill the first three
// cache lines: the queue, the packet in service, what a serialisation end
// and an arrival read, then the per-packet counters. On a fabric of
// thousands of ports each port is cold when its next packet comes.
struct alignas(64) port {
    port_queue queue;
    double rate_bps = 0;
    time_ns delay_ns = 0;
    time_ns queue_changed_at = 0;
    bool busy = false;          // serialising `in_service`
    bool in_service_priority = false;
    bool up = true;
    bool blackhole = false;
    // PFC: `paused` stops the data class of this port. The far end counts the
    // data bytes that came in through this link and are still buffered there
    // (`ingress_bytes`) and sends PAUSE above xoff, RESUME below xon.
    bool paused = false;
    bool pause_sent = false;
    std::uint32_t in_service = no_packet;
    std::uint32_t in_service_bytes = 0;
    std::uint32_t epoch = 0;    // bumped when the link goes down: packets on the wire are lost
    topology::node_id from = topology::no_node;
    topology::node_id to = topology::no_node;
    topology::link_id link = 0;
    double loss = 0;            // probability a packet is lost on the wire
    double corruption = 0;      // probability it arrives corrupted

    port_counters counters;     // its first cache line per packet, the rest on drops and marks

    std::uint64_t ingress_bytes = 0;
    time_ns paused_at = 0;
    common::rng rng{0};         // loss and corruption draws, one stream per port

    // Keeps the queue-time integral and the maximum up to date; call before
    // every change of the queue's bytes.
    void account(time_ns now) noexcept
    {
        const std::uint64_t b = occupancy();
        counters.queue_byte_ns += static_cast<double>(b) * static_cast<double>(now - queue_changed_at);
        queue_changed_at = now;
    }
    void note_max() noexcept
    {
        counters.max_queue_bytes = std::max(counters.max_queue_bytes, class_occupancy(false));
        counters.max_priority_bytes = std::max(counters.max_priority_bytes, class_occupancy(true));
    }

    // Bytes held by the port: queued plus the packet on the way out.
    std::uint64_t occupancy() const noexcept { return queue.bytes() + (busy ? in_service_bytes : 0); }
    // The same for one class.
    std::uint64_t in_service_of(bool priority) const noexcept
    {
        return busy && in_service_priority == priority ? in_service_bytes : 0;
    }
    std::uint64_t class_occupancy(bool priority) const noexcept
    {
        return (priority ? queue.high_bytes() : queue.low_bytes()) + in_service_of(priority);
    }
};

} // namespace laps::fabric
