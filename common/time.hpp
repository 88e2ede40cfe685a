#pragma once
// Time in laps: signed 64-bit nanoseconds, passed in by the caller.
//
// The algorithm core never reads a clock. The app passes TSC-derived time, the
// testbed passes virtual time, tests pass whatever they need. Signed, because
// one-way latencies measured between unsynchronised clocks can be negative.

#include <cstdint>

namespace laps::common {

using time_ns = std::int64_t;

inline constexpr time_ns ns_per_us = 1'000;
inline constexpr time_ns ns_per_ms = 1'000'000;
inline constexpr time_ns ns_per_s = 1'000'000'000;

// Time to put `bytes` on a wire of `bits_per_second`, in ns, rounded up.
constexpr time_ns serialization_ns(std::uint64_t bytes, double bits_per_second) noexcept
{
    const double ns = static_cast<double>(bytes) * 8.0 * 1e9 / bits_per_second;
    const auto whole = static_cast<time_ns>(ns);
    return static_cast<double>(whole) < ns ? whole + 1 : whole;
}

} // namespace laps::common
