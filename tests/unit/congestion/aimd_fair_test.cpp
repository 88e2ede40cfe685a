// The fair rate control (congestion/aimd.hpp, docs/congestion.md): one
// queueing target for every flow, a cut in proportion to the excess, an
// additive increase per unit of time whatever the flow's window, and a
// bounded recovery from the floor.
#include "congestion/aimd.hpp"
#include "fair_params.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace laps::congestion;

namespace {

aimd_params fair()
{
    return laps::test::fair_test_params();
}

} // namespace

TEST(AimdFair, VariantNames)
{
    EXPECT_EQ(to_string(cc_variant::paper), "paper");
    EXPECT_EQ(to_string(cc_variant::fair), "fair");
    EXPECT_EQ(laps::common::find_named(cc_variant_names, "fair"), cc_variant::fair);
    EXPECT_FALSE(laps::common::find_named(cc_variant_names, "Fair").has_value());
}

// The same queue gives the same cut per unit of time, whatever the flow's
// paths (its t): the signal is the queue, not each flow's own largest
// baseVal, and a flow whose window is half as long cuts twice as often by
// the square root of the fraction.
TEST(AimdFair, CutIsProportionalToTheExcessAndTheSamePerUnitOfTime)
{
    const auto p = fair();
    // queue 4 us, target 2 us: cut 0.8 x (4 - 2) / 4 = 40% per 10 us.
    aimd long_window(10e9, 10e9); // 2t = 10 us = interval
    EXPECT_EQ(long_window.on_ack_fair(p, 1'000'000, 5'000, 4'000), aimd_action::decrease);
    EXPECT_DOUBLE_EQ(long_window.rate_bps(), 6e9);
    aimd short_window(10e9, 10e9); // 2t = 5 us: two cuts in the same 10 us
    EXPECT_EQ(short_window.on_ack_fair(p, 1'000'000, 2'500, 4'000), aimd_action::decrease);
    EXPECT_NEAR(short_window.rate_bps(), 10e9 * std::sqrt(0.6), 1.0);
    EXPECT_EQ(short_window.on_ack_fair(p, 1'005'000, 2'500, 4'000), aimd_action::decrease);
    EXPECT_NEAR(short_window.rate_bps(), 6e9, 1.0);
    // A queue far above the target cuts by max_decrease, and a single cut
    // never by more, however long the window.
    aimd deep(10e9, 10e9);
    EXPECT_EQ(deep.on_ack_fair(p, 1'000'000, 5'000, 1'000'000), aimd_action::decrease);
    EXPECT_DOUBLE_EQ(deep.rate_bps(), 5e9);
    aimd long_deep(10e9, 10e9);
    EXPECT_EQ(long_deep.on_ack_fair(p, 1'000'000, 50'000, 1'000'000), aimd_action::decrease);
    EXPECT_DOUBLE_EQ(long_deep.rate_bps(), 5e9);
    // At the target, no cut: an increase.
    aimd at_target(10e9, 10e9);
    EXPECT_EQ(at_target.on_ack_fair(p, 1'000'000, 3'000, 2'000), aimd_action::increase);
}

// At most one cut per window (2t), and no increase before the cut has had a
// window to show in the queue.
TEST(AimdFair, OneCutPerWindowAndNoIncreaseRightAfterIt)
{
    const auto p = fair();
    aimd flow(10e9, 10e9);
    const std::int64_t t = 5'000;
    std::int64_t now = 1'000'000;
    ASSERT_EQ(flow.on_ack_fair(p, now, t, 8'000), aimd_action::decrease);
    const double after = flow.rate_bps();
    EXPECT_EQ(flow.on_ack_fair(p, now + 2 * t - 1, t, 8'000), aimd_action::none);
    EXPECT_EQ(flow.on_ack_fair(p, now + 2 * t - 1, t, 0), aimd_action::none);
    EXPECT_EQ(flow.rate_bps(), after);
    EXPECT_EQ(flow.on_ack_fair(p, now + 2 * t, t, 8'000), aimd_action::decrease);
}

// The increase is per unit of time: over the same 120 us a flow that adjusts
// every 6 us and one that adjusts every 20 us gain the same rate, 1 Gb/s per
// 10 us (before hyper increase starts).
TEST(AimdFair, AdditiveIncreaseIsPerUnitOfTimeWhateverTheWindow)
{
    auto p = fair();
    p.increase_stages = 64; // no hyper increase in this test
    aimd fast(1e9, 1e9);
    aimd slow(1e9, 1e9);
    const std::int64_t start = 1'000'000;
    for (std::int64_t now = start; now < start + 120'000; now += 6'000) {
        fast.on_ack_fair(p, now, 3'000, 0);
    }
    for (std::int64_t now = start; now < start + 120'000; now += 20'000) {
        slow.on_ack_fair(p, now, 10'000, 0);
    }
    EXPECT_NEAR(fast.rate_bps(), 1e9 + 12e9, 1.0);
    EXPECT_NEAR(slow.rate_bps(), 1e9 + 12e9, 1.0);
}

// docs/congestion.md "The `fair` variant", no starvation: a flow at its floor whose paths have gone quiet
// regains the line rate within about N + log2(cap / step) + 1 intervals of
// time, step being the increase per interval (after N intervals of increases
// without a cut the step doubles with each further interval), whatever its
// window: here one interval and four.
TEST(AimdFair, FlooredFlowRecoversTheLineRateInABoundedTime)
{
    const auto p = fair();
    const double interval = static_cast<double>(p.fair.interval_ns);
    const double bound_intervals = p.increase_stages + std::ceil(std::log2(p.cap_bps / p.fair.increase_bps)) + 1;
    for (const std::int64_t t : {5'000, 20'000}) {
        SCOPED_TRACE(t);
        aimd flow(10e9, 10e9);
        std::int64_t now = 1'000'000;
        while (flow.rate_bps() > p.floor_bps) {
            flow.on_ack_fair(p, now, t, 100'000); // a deep queue: cut to the floor
            now += 2 * t;
        }
        EXPECT_EQ(flow.rate_bps(), p.floor_bps);
        now += 2 * t;
        const std::int64_t quiet = now;
        while (flow.rate_bps() < p.cap_bps && now - quiet < 1'000'000) {
            EXPECT_NE(flow.on_ack_fair(p, now, t, 0), aimd_action::decrease);
            now += 2 * t;
        }
        EXPECT_EQ(flow.rate_bps(), p.cap_bps);
        EXPECT_LE(static_cast<double>(now - quiet), bound_intervals * interval + 2.0 * static_cast<double>(t));
        // A cut stops the doubling: the next increase is additive again.
        flow.on_ack_fair(p, now, t, 100'000);
        const double cut = flow.rate_bps();
        now += 4 * t;
        EXPECT_EQ(flow.on_ack_fair(p, now, t, 0), aimd_action::increase);
        EXPECT_DOUBLE_EQ(flow.rate_bps(), cut + p.fair.increase_bps * 2.0 * static_cast<double>(t) / interval);
    }
}

// docs/congestion.md "The `fair` variant": a cut while the flow measured milliseconds (PFC back-pressure
// held 11 ms in the testbed) must not hold its increases back for 2t: the
// windows are bounded at 100 intervals (2 ms), so a flow cut then regains
// the line within that plus the recovery time. Unbounded, a Dragonfly flow
// starved past the end of its run.
TEST(AimdFair, AHugeRoundTripDoesNotHoldIncreasesBackForTwoT)
{
    const auto p = fair();
    aimd flow(1e9, 1e9);
    std::int64_t now = 1'000'000;
    ASSERT_EQ(flow.on_ack_fair(p, now, 12'000'000, 8'000'000), aimd_action::decrease); // t = 12 ms
    const std::int64_t bound = 2 * 100 * p.fair.interval_ns;
    EXPECT_EQ(flow.on_ack_fair(p, now + bound - 1, 6'500, 0), aimd_action::none);
    EXPECT_NE(flow.on_ack_fair(p, now + bound, 6'500, 0), aimd_action::none);
    // And a huge t does not make a huge step: at most 2 ms worth of increase.
    aimd other(1e9, 1e9);
    other.on_ack_fair(p, now, 12'000'000, 0);
    EXPECT_LE(other.rate_bps(), 1e9 + p.fair.increase_bps * 200.0 + 1.0);
}

namespace {

// Average rate of the one-path flow over the eight-path flow's, second half
// of 200 ms at one 10 Gb/s fluid queue, starting at 9 and 1 Gb/s.
double one_over_eight_at_one_queue(const aimd_params& p)
{
    aimd one_path(9e9, 9e9);   // short window: t = 3 us
    aimd eight_path(1e9, 1e9); // long window: t = 9 us
    const double capacity = 10e9;
    double queue_bits = 0;
    const std::int64_t step_ns = 1'000;
    const std::int64_t start = 1'000'000;
    const std::int64_t end = start + 200'000'000;
    double one_sum = 0; // rates averaged over the second half
    double eight_sum = 0;
    for (std::int64_t now = start; now < end; now += step_ns) {
        const double in = one_path.rate_bps() + eight_path.rate_bps();
        queue_bits = std::max(0.0, queue_bits + (in - capacity) * static_cast<double>(step_ns) / 1e9);
        const auto queue_ns = static_cast<std::int64_t>(queue_bits / capacity * 1e9);
        one_path.on_ack_fair(p, now, 3'000 + queue_ns, queue_ns);
        eight_path.on_ack_fair(p, now, 9'000 + queue_ns, queue_ns);
        if (now >= start + (end - start) / 2) {
            one_sum += one_path.rate_bps();
            eight_sum += eight_path.rate_bps();
        }
    }
    return one_sum / eight_sum;
}

} // namespace

// Two flows at one bottleneck that both see its queue (docs/congestion.md: a
// one-path flow beside an eight-path flow): equal additive increases and
// equal-fraction cuts close any gap between their rates (Chiu & Jain),
// whatever their windows. A toy fluid bottleneck, 10 Gb/s.
TEST(AimdFair, TwoFlowsWithDifferentWindowsConvergeToEqualRatesAtOneQueue)
{
    const double ratio = one_over_eight_at_one_queue(fair());
    std::printf("average rate, one-path / eight-path flow: %.3f\n", ratio);
    EXPECT_GT(ratio, 0.7);
    EXPECT_LT(ratio, 1.0 / 0.7);
}

// Swift's flow-based target scaling (docs/congestion.md): a flow's target
// grows with 1/sqrt(rate), from the plain target at the cap to target +
// flow_scaling at the floor, so that a flow squeezed to a low rate keeps
// increasing at a queue that makes the fast flows cut.
TEST(AimdFair, FlowScalingRaisesTheTargetOfASlowFlow)
{
    auto p = fair();
    p.fair.flow_scaling_ns = 20'000;
    // At the cap the target is the plain 2 us: a 4 us queue cuts.
    aimd fast(100e9, 100e9);
    EXPECT_EQ(fast.on_ack_fair(p, 1'000'000, 5'000, 4'000), aimd_action::decrease);
    // At the floor it is 22 us: a 4 us queue lets the flow increase...
    aimd floored(1e8, 1e8);
    EXPECT_EQ(floored.on_ack_fair(p, 1'000'000, 5'000, 4'000), aimd_action::increase);
    // ...and a 30 us queue cuts it by gain x (30 - 22) / 30 per interval.
    aimd floored_deep(2e8, 2e8); // 2x the floor: the cut shows above it
    const double share_2e8 = (1 / std::sqrt(2e8) - 1 / std::sqrt(100e9)) / (1 / std::sqrt(1e8) - 1 / std::sqrt(100e9));
    const double target_2e8 = 2'000 + std::floor(share_2e8 * 20'000);
    EXPECT_EQ(floored_deep.on_ack_fair(p, 1'000'000, 5'000, 30'000), aimd_action::decrease);
    EXPECT_NEAR(floored_deep.rate_bps(), 2e8 * (1 - 0.8 * (30'000 - target_2e8) / 30'000), 1.0);
    // At 10 Gb/s: share (1e-5 - 10^-5.5) / (1e-4 - 10^-5.5) = 0.0706, target 3.41 us.
    aimd mid_low(10e9, 10e9);
    EXPECT_EQ(mid_low.on_ack_fair(p, 1'000'000, 5'000, 3'350), aimd_action::increase);
    aimd mid_high(10e9, 10e9);
    EXPECT_EQ(mid_high.on_ack_fair(p, 1'000'000, 5'000, 3'450), aimd_action::decrease);
    // Off (0), the 10 Gb/s flow cuts at the plain target.
    p.fair.flow_scaling_ns = 0;
    aimd plain(10e9, 10e9);
    EXPECT_EQ(plain.on_ack_fair(p, 1'000'000, 5'000, 3'350), aimd_action::decrease);
}

// With the flow scaling the same two flows end closer to equal rates: the
// slower one's higher target lets it grow while the faster one cuts.
TEST(AimdFair, FlowScalingBringsTwoFlowsAtOneQueueCloserToEqualRates)
{
    auto p = fair();
    const double plain = one_over_eight_at_one_queue(p);
    p.fair.flow_scaling_ns = 20'000;
    const double scaled = one_over_eight_at_one_queue(p);
    std::printf("one-path / eight-path: %.3f plain, %.3f with the flow scaling\n", plain, scaled);
    EXPECT_LT(std::abs(std::log(scaled)), std::abs(std::log(plain)));
}
