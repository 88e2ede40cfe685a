#pragma once
// The 48-bit `time` field. DATA/PROBE carry the sender's clock in ns modulo
// 2^48 (wraps every ~78 hours); ACK/PROBE_ACK carry a one-way latency as a
// 48-bit two's complement value, because the two clocks are not synchronised
// and `receiver now - sender time` can be negative. Any latency within
// +-2^47 ns (~39 hours) survives the round trip exactly.

#include "common/time.hpp"

#include <cstdint>

namespace laps::wire {

inline constexpr std::uint64_t time48_mask = (std::uint64_t{1} << 48) - 1;
inline constexpr std::int64_t latency48_max = (std::int64_t{1} << 47) - 1;
inline constexpr std::int64_t latency48_min = -(std::int64_t{1} << 47);

// A clock reading as it goes on the wire (two's complement wrap of negative
// readings too, so any time_ns is accepted).
constexpr std::uint64_t to_time48(common::time_ns now) noexcept
{
    return static_cast<std::uint64_t>(now) & time48_mask;
}

// Interprets the low 48 bits of `v` as a signed 48-bit number.
constexpr std::int64_t sign_extend48(std::uint64_t v) noexcept
{
    v &= time48_mask;
    constexpr std::uint64_t sign = std::uint64_t{1} << 47;
    return static_cast<std::int64_t>(v ^ sign) - static_cast<std::int64_t>(sign);
}

// One-way latency of a packet stamped `sent48` that arrives at local time
// `now`: (now - sent) mod 2^48, as a signed value.
constexpr std::int64_t latency_since(std::uint64_t sent48, common::time_ns now) noexcept
{
    return sign_extend48(to_time48(now) - sent48);
}

// A latency as ACKs carry it. Values outside +-2^47 ns are clamped rather than
// wrapped, so a huge delay never comes back with the opposite sign.
constexpr std::uint64_t latency_to_time48(std::int64_t latency_ns) noexcept
{
    if (latency_ns > latency48_max) {
        latency_ns = latency48_max;
    } else if (latency_ns < latency48_min) {
        latency_ns = latency48_min;
    }
    return static_cast<std::uint64_t>(latency_ns) & time48_mask;
}

} // namespace laps::wire
