#pragma once
// One emulated host: its LAPS engine (the real pipeline::engine, unchanged),
// its clock, and the frames its flows hand to the engine.
//
// Host frames are IPv4/UDP, one distinct 5-tuple per flow (source port and
// destination port from the flow id). Their payload starts with a tag (magic,
// flow id, frame index) so that the receiver can count every frame once and
// the fabric can tell which flow a DATA packet carries.

#include "fabric/flow.hpp"
#include "pipeline/engine.hpp"
#include "tables/table_spec.hpp"

#include <rte_mbuf.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace laps::fabric {

inline constexpr time_ns no_wake = std::numeric_limits<time_ns>::max();

struct host_nic {
    topology::node_id id = 0;
    std::uint32_t ipv4 = 0;        // host order
    double rate_bps = 0;           // loads, ideal FCTs and the AIMD cap are relative to it
    time_ns clock_offset_ns = 0;   // engine clock = virtual time + this (+ drift and steps)
    double drift_ppm = 0;          // the clock gains this x 1e-6 ns per virtual ns
    struct clock_step {
        time_ns at = 0;            // virtual time
        time_ns step = 0;          // added from then on
    };
    std::vector<clock_step> clock_steps; // by time
    std::unique_ptr<pipeline::engine> engine;
    tables::table_spec table;      // the PST/PIT it was built with

    std::vector<std::uint32_t> sending; // flows with frames the engine has not taken, in start order
    time_ns wake_at = no_wake;     // the pending host_wake event
    std::uint64_t frame_pool_waits = 0;  // frames not made: host-frame pool empty
    std::uint64_t flow_table_waits = 0;  // first frames refused: engine flow table full

    // What the host's clock reads at virtual time `v` (the engine's `now`).
    time_ns clock(time_ns v) const noexcept
    {
        time_ns reading = v + clock_offset_ns;
        if (drift_ppm != 0) {
            reading += static_cast<time_ns>(std::llround(static_cast<double>(v) * drift_ppm * 1e-6));
        }
        for (const auto& s : clock_steps) {
            reading += v >= s.at ? s.step : 0;
        }
        return reading;
    }

    // The first virtual time >= `from` at which the clock reads at least
    // `reading` (when an engine deadline falls due).
    time_ns virtual_time_of(time_ns reading, time_ns from) const noexcept;
};

// Host-frame layout: Ethernet 14 + IPv4 20 + UDP 8, then the tag.
inline constexpr std::uint32_t frame_headers = 42;
inline constexpr std::uint32_t tag_bytes = 12;
inline constexpr std::uint32_t tag_magic = 0x4c544246; // "LTBF"
inline constexpr std::uint32_t min_frame = 60;         // Ethernet minimum without FCS

// Payload bytes per full frame of `frame_bytes`.
constexpr std::uint32_t payload_per_frame(std::uint32_t frame_bytes) noexcept
{
    return frame_bytes - frame_headers;
}

// Application bytes in frame `index` of a flow of `bytes`.
std::uint32_t frame_payload(std::uint64_t bytes, std::uint32_t frame_bytes, std::uint32_t index) noexcept;
// Its length as an Ethernet frame.
std::uint32_t frame_length(std::uint64_t bytes, std::uint32_t frame_bytes, std::uint32_t index) noexcept;
std::uint32_t frame_count(std::uint64_t bytes, std::uint32_t frame_bytes) noexcept;

// Builds frame `index` of flow `f` from `pool`; nullptr when the pool is empty.
rte_mbuf* make_frame(rte_mempool* pool, const flow& f, std::uint32_t index, std::uint32_t src_ip,
                     std::uint32_t dst_ip, std::uint32_t frame_bytes) noexcept;

struct frame_tag {
    std::uint32_t flow = 0;
    std::uint32_t index = 0;
};

// The tag of the host frame that starts `offset` bytes into `m` (0 for a
// delivered frame, the inner offset for a DATA packet); nullopt when absent.
std::optional<frame_tag> read_tag(const rte_mbuf* m, std::uint32_t offset) noexcept;

} // namespace laps::fabric
