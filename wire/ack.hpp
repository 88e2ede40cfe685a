#pragma once
// Answers built from a parsed packet: the ACK of a DATA, the PROBE_ACK of a
// PROBE (paper §III-D, §III-E). The answer goes back on the reversed source
// route, so its anchors are the received anchors in reverse order, visited
// from index 0.

#include "common/time.hpp"
#include "wire/encode.hpp"
#include "wire/parse.hpp"

namespace laps::wire {

// The answer to `received` (DATA -> ACK, PROBE -> PROBE_ACK; an ACK or
// PROBE_ACK gets an ACK-typed copy, which callers should not ask for) at local
// time `now`:
//   - time     = one-way latency now - received.time (mod 2^48, signed)
//   - pid, flow_id, seq echoed; ECN_ECHO set when the packet arrived CE-marked
//   - anchors reversed, anchor_index 0, no inner frame
//   - dst_ip = the received outer source; entropy = the received entropy, so
//     all answers of one path follow one route back and stay in order (Alg. 3)
packet_spec ack_for(const parsed_packet& received, common::time_ns now) noexcept;

// Only the LAPS header of ack_for (for callers with their own outer headers).
// `received_bytes`: the answered packet's frame length (echoed as acked_bytes).
laps_header ack_header_for(const laps_header& received, bool ce_marked, common::time_ns now,
                           std::uint32_t received_bytes = 0) noexcept;

} // namespace laps::wire
