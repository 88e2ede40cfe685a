// Clocks as real hosts have them (docs/design.md §3; paper §II-C "no need
// for the nodes to synchronize their clocks"): configs/scenarios/clock_drift.yaml
// runs the demo's in-cast with every host clock offset by up to +-1 ms,
// running up to +-100 ppm fast or slow, and the root's clock set forward by
// 1 ms in the middle. LAPS must deliver every byte, and its average FCT must
// stay within 5% of the same scenario with the drift and the step removed
// (the offsets kept: clock_offsets_test shows they change nothing).
#include "helpers.hpp"

#include <cmath>
#include <cstdio>

using namespace laps;
using namespace laps::test;

namespace {

fabric::scenario drift_scenario()
{
    return fabric::load_scenario(std::string(LAPS_SOURCE_ROOT) + "/configs/scenarios/clock_drift.yaml");
}

// The same scenario on clocks that keep their offsets but neither drift nor step.
fabric::scenario steady(fabric::scenario s)
{
    s.clocks.drift_max_ppm = 0;
    s.clocks.steps.clear();
    return s;
}

void expect_every_byte(const fabric::run_summary& s)
{
    EXPECT_EQ(s.completed, s.flows);
    EXPECT_EQ(s.bytes_delivered, s.bytes_offered);
    EXPECT_EQ(s.host_duplicates, 0u);
}

} // namespace

TEST(II_C_DriftingClocks, DriftAndAStepKeepTheAverageFctWithin5Percent)
{
    const auto drifting = drift_scenario();
    ASSERT_EQ(drifting.clocks.drift_max_ppm, 100.0);
    ASSERT_EQ(drifting.clocks.steps.size(), 1u);
    const auto with = run_to_end(drifting);
    const auto without = run_to_end(steady(drifting));
    expect_every_byte(with);
    expect_every_byte(without);
    // The estimator saw the step and followed the fast clocks.
    EXPECT_GT(with.engines.clock_step_forward, 0u);
    EXPECT_GT(with.engines.clock_offset_raised, 0u);
    EXPECT_EQ(without.engines.clock_step_forward, 0u);
    const double ratio = with.fct_us.mean / without.fct_us.mean;
    std::printf("average FCT %.1f us with drift and the step, %.1f us without (x%.4f)\n", with.fct_us.mean,
                without.fct_us.mean, ratio);
    EXPECT_LT(std::abs(ratio - 1.0), 0.05);
}

// The same with the root's clock set back by 1 ms instead: re-seeded on the
// first sample, every flow completes within 5% too.
TEST(II_C_DriftingClocks, AClockSetBackIsReseededAtOnce)
{
    auto back = drift_scenario();
    back.clocks.steps.front().step_ns = -static_cast<fabric::time_ns>(common::ns_per_ms);
    const auto with = run_to_end(back);
    const auto without = run_to_end(steady(back));
    expect_every_byte(with);
    EXPECT_GT(with.engines.clock_step_back, 0u);
    EXPECT_LT(std::abs(with.fct_us.mean / without.fct_us.mean - 1.0), 0.05);
}
