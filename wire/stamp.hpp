#pragma once
// Stamping at the wire (docs/app.md "Timestamps"): the engine
// writes a DATA's or PROBE's `time` when it builds the packet, which may be
// microseconds before the shell hands it to the NIC. The shell rewrites it
// with its clock immediately before the TX burst, so the latency the
// receiver measures starts when the packet leaves.
//
// Only packets as LAPS sends them are touched: IPv4 without options, no
// VLAN tag, UDP to `udp_port` (checksum 0), a DATA or PROBE header, all in
// the first segment. Anything else (ACKs, pass-through frames) keeps its
// bytes, and so does an authenticated packet: its tag covers `time`
// (docs/security.md), so it carries the time it was built and signed.

#include "common/time.hpp"

#include <rte_mbuf.h>

#include <cstdint>

namespace laps::wire {

// Rewrites the time field of an outgoing DATA or PROBE with `now`; whether it did.
bool stamp_departure(rte_mbuf* m, std::uint16_t udp_port, common::time_ns now) noexcept;

} // namespace laps::wire
