#pragma once
// The fair variant's parameters the congestion tests start from (the
// increase at 1 Gb/s per 10 us, as when the tests were written; the others
// the defaults).
#include "congestion/aimd.hpp"

namespace laps::test {

inline congestion::aimd_params fair_test_params()
{
    congestion::aimd_params p;
    p.variant = congestion::cc_variant::fair;
    p.increase_stages = 5;
    p.floor_bps = 1e8;
    p.cap_bps = 100e9;
    p.fair.target_queue_ns = 2'000;
    p.fair.increase_bps = 1e9;
    p.fair.interval_ns = 10'000;
    p.fair.decrease_gain = 0.8;
    p.fair.max_decrease = 0.5;
    return p;
}

} // namespace laps::test
