#pragma once
// A token-bucket pacer: turns a flow's AIMD rate into send times.
//
// Tokens are bytes, refilled at the current rate and capped at `burst_bytes`,
// so a flow idle for a while may send up to one burst back-to-back and is
// then held to its rate. `burst_bytes` must be at least the largest packet,
// or that packet could never leave (config validation checks it).

#include "common/time.hpp"

#include <algorithm>
#include <cstdint>

namespace laps::congestion {

using common::time_ns;

class pacer {
public:
    explicit pacer(double burst_bytes, time_ns now = 0) noexcept : _tokens(burst_bytes), _last_ns(now) {}

    // Sends `bytes` now if the bucket holds them; false leaves it unchanged
    // except for the refill.
    bool try_send(time_ns now, std::uint32_t bytes, double rate_bps, double burst_bytes) noexcept
    {
        refill(now, rate_bps, burst_bytes);
        if (_tokens < static_cast<double>(bytes)) {
            return false;
        }
        _tokens -= static_cast<double>(bytes);
        return true;
    }

    // Earliest time at which `bytes` may leave at `rate_bps` (now if they may).
    time_ns ready_at(time_ns now, std::uint32_t bytes, double rate_bps, double burst_bytes) noexcept
    {
        refill(now, rate_bps, burst_bytes);
        const double missing = static_cast<double>(bytes) - _tokens;
        if (missing <= 0.0) {
            return now;
        }
        return now + static_cast<time_ns>(missing * 8e9 / rate_bps) + 1;
    }

    double tokens() const noexcept { return _tokens; }

private:
    void refill(time_ns now, double rate_bps, double burst_bytes) noexcept
    {
        if (now > _last_ns) {
            _tokens = std::min(burst_bytes, _tokens + static_cast<double>(now - _last_ns) * rate_bps / 8e9);
            _last_ns = now;
        }
    }

    double _tokens;
    time_ns _last_ns;
};

} // namespace laps::congestion
