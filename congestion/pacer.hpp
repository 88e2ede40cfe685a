#pragma once
// A token-bucket pacer: turns a flow's AIMD rate into send times.
//
// Tokens are bytes, refilled at the current rate and capped at the burst,
// so a flow idle for a while may send up to one burst back-to-back and is
// then held to its rate. The burst must be at least the largest packet, or
// that packet could never leave (config validation checks it).
//
// Integer arithmetic (docs/pipeline.md "Rates"): the rate is bytes per ns in 24-bit
// fixed point (pace_rate), converted once when the AIMD rate changes, so a
// packet costs a multiply and a compare, no floating point and no divide;
// only a packet that has to wait divides, to tell when. A rate is exact to
// 2^-24 byte per ns (1 ppm at 100 Mb/s, the default floor) and at most 2^7
// bytes per ns (1 Tb/s).

#include "common/time.hpp"

#include <algorithm>
#include <cstdint>

namespace laps::congestion {

using common::time_ns;

// Bytes per ns x 2^24.
struct pace_rate {
    std::uint64_t q24 = 1;

    static pace_rate from_bps(double bps) noexcept
    {
        const double q = bps * (one / 8e9); // one multiply: the quotient is a constant
        // At least 1 (a rate of 0 would never send); at most `most`.
        return pace_rate{q < 1.0 ? 1 : q > static_cast<double>(most) ? most : static_cast<std::uint64_t>(q)};
    }
    double bps() const noexcept { return static_cast<double>(q24) / one * 8e9; }
    bool operator==(const pace_rate&) const = default;

    static constexpr double one = 16777216.0;       // 2^24
    static constexpr std::uint64_t most = 1ull << 31; // 128 bytes per ns
};

class pacer {
public:
    explicit pacer(std::uint32_t burst_bytes, time_ns now = 0) noexcept : _tokens(q24(burst_bytes)), _last_ns(now) {}

    // Sends `bytes` now if the bucket holds them; false leaves it unchanged
    // except for the refill.
    bool try_send(time_ns now, std::uint32_t bytes, pace_rate rate, std::uint32_t burst_bytes) noexcept
    {
        refill(now, rate, burst_bytes);
        if (_tokens < q24(bytes)) {
            return false;
        }
        _tokens -= q24(bytes);
        return true;
    }

    // Earliest time at which `bytes` may leave at `rate` (now if they may).
    time_ns ready_at(time_ns now, std::uint32_t bytes, pace_rate rate, std::uint32_t burst_bytes) noexcept
    {
        refill(now, rate, burst_bytes);
        if (_tokens >= q24(bytes)) {
            return now;
        }
        return now + static_cast<time_ns>((q24(bytes) - _tokens) / rate.q24) + 1;
    }

    double tokens() const noexcept { return static_cast<double>(_tokens) / pace_rate::one; }

private:
    static constexpr std::uint64_t q24(std::uint64_t bytes) noexcept { return bytes << 24; }

    void refill(time_ns now, pace_rate rate, std::uint32_t burst_bytes) noexcept
    {
        if (now > _last_ns) {
            // 2^32 ns (4 s) fills any bucket (a 4 GB burst at 1 B/us), and
            // elapsed x rate stays below 2^63.
            const auto elapsed = static_cast<std::uint64_t>(std::min<time_ns>(now - _last_ns, time_ns{1} << 32));
            _tokens = std::min(q24(burst_bytes), _tokens + elapsed * rate.q24);
            _last_ns = now;
        }
    }

    std::uint64_t _tokens; // bytes x 2^24
    time_ns _last_ns;
};

} // namespace laps::congestion
