#pragma once
// Coalesced ACKs (ACK_RUN, docs/wire-format.md "Coalesced ACKs"). A receiver
// that coalesces answers the DATA packets of one (flow, path) that arrive in
// one receive burst with one packet: its fixed header is the ACK of the run's
// first DATA, and the run block after the anchors answers the others, one
// 12-byte entry each, in arrival order. An ACK_RUN covers one path and goes
// back on that path's reversed route, as that path's ACKs do, so the sender
// sees each path's answers in the order the receiver saw its DATA (Alg. 3).

#include "common/time.hpp"
#include "wire/laps_header.hpp"
#include "wire/layout.hpp"
#include "wire/parse.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

namespace laps::wire {

// What an answer tells the sender about one DATA packet: an ACK's (or
// ACK_RUN's) fixed header, or one entry of a run block.
struct answer_fields {
    std::uint32_t seq = 0;
    std::int64_t latency_ns = 0;
    std::uint16_t time_echo = 0;
    std::uint16_t acked_bytes = 0;
    bool ecn_echo = false;
};

inline answer_fields answer_of(const laps_header& h) noexcept
{
    return {h.seq, h.latency_ns(), h.time_echo, h.acked_bytes, h.has_flag(flag_ecn_echo)};
}

// One entry as the receiver writes it.
struct run_entry {
    std::uint32_t seq = 0;
    std::int32_t latency_delta = 0; // from the fixed header's latency
    std::uint16_t time_echo = 0;
    std::uint16_t acked_bytes = 0;
};

// The latency the fixed header of an answer to `first` at `now` reports:
// what entries' deltas count from.
constexpr std::int64_t run_base_latency(const parsed_packet& first, common::time_ns now) noexcept
{
    return sign_extend48(latency_to_time48(latency_since(first.header.time, now)));
}

// The entry answering `data`, received at `now`, in a run whose fixed header
// reports `base_latency`; false when its latency is too far from that to be
// a 32-bit delta (more than 2.1 s apart: the DATA starts a run of its own).
constexpr bool run_entry_for(const parsed_packet& data, common::time_ns now, std::int64_t base_latency,
                             run_entry& out) noexcept
{
    const std::int64_t delta = latency_since(data.header.time, now) - base_latency;
    if (delta < std::numeric_limits<std::int32_t>::min() || delta > std::numeric_limits<std::int32_t>::max()) {
        return false;
    }
    out.seq = data.header.seq;
    out.latency_delta = static_cast<std::int32_t>(delta);
    out.time_echo = static_cast<std::uint16_t>(data.header.time);
    out.acked_bytes = static_cast<std::uint16_t>(data.frame_length < 0xFFFF ? data.frame_length : 0xFFFF);
    return true;
}

// The run block's 8-byte header at `out` for `entries` entries (1..31). Bit
// i of `ecn_echo_bits`: entry i's DATA arrived CE-marked. Reserved bytes and
// bit 31 are written as 0.
void write_run_header(std::uint8_t* out, std::size_t entries, std::uint32_t ecn_echo_bits) noexcept;
// Entry i of a run block at `block`.
void write_run_entry(std::uint8_t* block, std::size_t i, const run_entry& entry) noexcept;
// The whole run block of `entries` at `out`: run_block_size(entries.size()) bytes.
void write_run_block(std::uint8_t* out, std::span<const run_entry> entries, std::uint32_t ecn_echo_bits) noexcept;

// Entry i of the run block at `block`, whose count parse() checked, as an
// answer of the ACK_RUN whose fixed header reported `base_latency`.
answer_fields read_run_entry(const std::uint8_t* block, std::size_t i, std::int64_t base_latency) noexcept;

} // namespace laps::wire
