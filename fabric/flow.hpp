#pragma once
// A flow of the testbed: application bytes from one host to another, cut into
// host frames (IPv4/UDP, `frame_bytes` each, the last one shorter). The
// sender offers frames to its engine only when the engine takes them; the
// receiver counts every frame once.

#include "common/time.hpp"
#include "topology/model.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace laps::fabric {

using common::time_ns;

// What traffic generators produce.
struct flow_spec {
    topology::node_id src = 0;
    topology::node_id dst = 0;
    std::uint64_t bytes = 0;
    time_ns start = 0;
    std::uint32_t tag = 0; // index of the traffic item that made it
};

// What the sender's side reads per frame (pump, inject) fills the record's
// first line, with the receiver's counters; its bitmap and the rest follow.
// A fabric of thousands of hosts finds few records in the cache.
struct alignas(64) flow {
    std::uint32_t id = 0;
    std::uint32_t frames = 0;      // host frames it is cut into
    std::uint32_t next_frame = 0;  // sender: first frame not yet taken by the engine
    std::uint32_t in_engine = 0;   // sender: taken by the engine, not yet sent once
    std::uint32_t delivered_frames = 0; // receiver
    bool started = false;
    flow_spec spec;
    std::uint64_t delivered_bytes = 0; // receiver

    std::vector<std::uint64_t> seen; // receiver: bit per frame
    time_ns end = -1;              // last byte delivered; -1 while incomplete
    std::uint64_t wire_bytes = 0;  // their bytes as Ethernet frames
    time_ns ideal_ns = 0;          // FCT on an idle fabric (results.hpp)
    std::uint32_t resent = 0;      // DATA resends of this flow's frames
    std::uint32_t duplicates = 0;  // frames the host received twice (must stay 0)
    // Sender: the bytes its DATA packets' first transmissions took on the
    // wire, every header the transport adds included (the wire bound's bytes).
    std::uint64_t first_wire_bytes = 0;

    bool complete() const noexcept { return end >= 0; }
    time_ns fct() const noexcept { return end - spec.start; }
};
static_assert(offsetof(flow, seen) == 64, "the per-frame fields fill the first line");
static_assert(sizeof(flow) == 128);

} // namespace laps::fabric
