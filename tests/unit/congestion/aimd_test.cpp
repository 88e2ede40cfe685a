// AIMD, Alg. 2 and the worked example of §III-F.
#include "congestion/aimd.hpp"

#include <gtest/gtest.h>

using namespace laps::congestion;

namespace {

constexpr double a = 10e9; // the example's unit rate "a"
constexpr std::int64_t T = 10'000; // max baseVal: 10 us
constexpr std::int64_t t_ok = 8'000;     // min realVal below T: uncongested
constexpr std::int64_t t_congested = 12'000;

aimd_params params()
{
    aimd_params p;
    p.increase_stages = 5;
    p.floor_bps = 1e6;
    p.cap_bps = 1e15; // far above the example's rates
    return p;
}

} // namespace

TEST(Aimd, NewFlowStartsAtLineRate)
{
    aimd_params p;
    p.cap_bps = 25e9;
    const aimd flow(p);
    EXPECT_EQ(flow.rate_bps(), 25e9);
    EXPECT_EQ(flow.expected_bps(), 25e9);
}

// §III-F: expRate 2a, curRate a; N increases bring curRate close to 2a; the
// next doubles expRate to 4a and lifts curRate by (4a - 2a) / 2 = a to ~3a;
// congestion then halves curRate to ~3a/2 and makes ~3a the new expRate.
TEST(Aimd, WorkedExampleOfSectionIIIF)
{
    const auto p = params();
    aimd flow(a, 2 * a);
    std::int64_t now = 0;
    for (std::uint32_t stage = 1; stage <= p.increase_stages; ++stage) {
        EXPECT_EQ(flow.on_ack(p, now, T, t_ok), aimd_action::increase);
        now += 2 * t_ok;
    }
    EXPECT_EQ(flow.expected_bps(), 2 * a);
    EXPECT_NEAR(flow.rate_bps(), 2 * a, a / (2 * p.increase_stages)); // "close to 2a"
    EXPECT_NEAR(flow.rate_bps(), 2 * a - a / 32, 1.0);               // exactly a * (2 - 2^-5)

    EXPECT_EQ(flow.on_ack(p, now, T, t_ok), aimd_action::hyper_increase);
    EXPECT_EQ(flow.expected_bps(), 4 * a);
    EXPECT_NEAR(flow.rate_bps(), 3 * a, 0.02 * a);
    const double before = flow.rate_bps();
    now += 2 * t_ok;

    EXPECT_EQ(flow.on_ack(p, now, T, t_congested), aimd_action::decrease);
    EXPECT_EQ(flow.expected_bps(), before); // ~3a
    EXPECT_EQ(flow.rate_bps(), before / 2); // ~3a/2
    EXPECT_NEAR(flow.rate_bps(), 1.5 * a, 0.01 * a);
    EXPECT_EQ(flow.stage(), 0u);
}

// One adjustment per 2t window (the text of §III-F; the pseudo-code's
// `nxtDec > Now()` is read as `Now() >= nxtDec`, docs/design.md §3.5).
TEST(Aimd, AdjustsAtMostOncePer2tWindow)
{
    const auto p = params();
    aimd flow(a, 2 * a);
    EXPECT_EQ(flow.on_ack(p, 1000, T, t_congested), aimd_action::decrease);
    const double after_first = flow.rate_bps();
    // Until 1000 + 2 x 12 us, further congested ACKs change nothing.
    EXPECT_EQ(flow.on_ack(p, 1000 + 1, T, t_congested), aimd_action::none);
    EXPECT_EQ(flow.on_ack(p, 1000 + 2 * t_congested - 1, T, t_congested), aimd_action::none);
    EXPECT_EQ(flow.rate_bps(), after_first);
    EXPECT_EQ(flow.on_ack(p, 1000 + 2 * t_congested, T, t_congested), aimd_action::decrease);
    EXPECT_EQ(flow.rate_bps(), after_first / 2);

    // Same for increases, with their own window.
    aimd up(a, 2 * a);
    EXPECT_EQ(up.on_ack(p, 0, T, t_ok), aimd_action::increase);
    EXPECT_EQ(up.on_ack(p, 2 * t_ok - 1, T, t_ok), aimd_action::none);
    EXPECT_EQ(up.stage(), 1u);
    EXPECT_EQ(up.on_ack(p, 2 * t_ok, T, t_ok), aimd_action::increase);
    EXPECT_EQ(up.stage(), 2u);
}

// Hyper increase: incStage is not reset after N, so expRate keeps doubling on
// every further increase until a decrease.
TEST(Aimd, HyperIncreaseKeepsDoublingUntilADecrease)
{
    const auto p = params();
    aimd flow(a, 2 * a);
    std::int64_t now = 0;
    for (std::uint32_t i = 0; i < p.increase_stages; ++i, now += 2 * t_ok) {
        flow.on_ack(p, now, T, t_ok);
    }
    double expected = 2 * a;
    for (int i = 0; i < 4; ++i, now += 2 * t_ok) {
        EXPECT_EQ(flow.on_ack(p, now, T, t_ok), aimd_action::hyper_increase);
        expected *= 2;
        EXPECT_EQ(flow.expected_bps(), expected);
    }
    EXPECT_EQ(flow.on_ack(p, now, T, t_congested), aimd_action::decrease);
    now += 2 * t_congested;
    EXPECT_EQ(flow.on_ack(p, now, T, t_ok), aimd_action::increase); // stage 1 again
    EXPECT_EQ(flow.stage(), 1u);
}

TEST(Aimd, RatesAreFlooredAndCapped)
{
    aimd_params p = params();
    p.floor_bps = 1e9;
    p.cap_bps = 40e9;
    aimd flow(p);
    std::int64_t now = 0;
    for (int i = 0; i < 20; ++i, now += 2 * t_congested) {
        flow.on_ack(p, now, T, t_congested);
    }
    EXPECT_EQ(flow.rate_bps(), 1e9);
    for (int i = 0; i < 40; ++i, now += 2 * t_ok) {
        flow.on_ack(p, now, T, t_ok);
    }
    EXPECT_LE(flow.rate_bps(), 40e9);
    EXPECT_LE(flow.expected_bps(), 40e9);
    EXPECT_GT(flow.rate_bps(), 39e9);
}

// t > T compares the best path with the worst baseline: one fast path is
// enough to keep increasing (§II-F).
TEST(Aimd, OneUncongestedPathIsEnoughToIncrease)
{
    const auto p = params();
    aimd flow(a, 2 * a);
    EXPECT_EQ(flow.on_ack(p, 0, T, T), aimd_action::increase); // t == T is not congestion
}

// The LAPS authors' ns-3 code (rdma-hw.cc IncreaseRateForLaps) raises the
// rate by at least 1 Gb/s per increase: cur = max(cur + 1 Gb/s, (exp + cur)/2),
// with expRate kept at or above curRate (docs/EVALUATION.md measures it).
TEST(Aimd, ArtefactMinimumIncreaseStep)
{
    aimd_params p = params();
    p.min_increase_bps = 1e9;
    aimd flow(1e9, 1.5e9); // halfway would give 1.25 Gb/s
    EXPECT_EQ(flow.on_ack(p, 0, T, t_ok), aimd_action::increase);
    EXPECT_DOUBLE_EQ(flow.rate_bps(), 2e9);
    EXPECT_DOUBLE_EQ(flow.expected_bps(), 2e9) << "expRate follows curRate up";
    aimd far(1e9, 9e9); // halfway (5 Gb/s) is more than +1 Gb/s
    far.on_ack(p, 0, T, t_ok);
    EXPECT_DOUBLE_EQ(far.rate_bps(), 5e9);
}

// ...and allows one increase per 2T (max baseVal) rather than per 2t.
TEST(Aimd, ArtefactIncreaseWindowIsTwiceT)
{
    aimd_params p = params();
    p.increase_window_T = true;
    aimd flow(a, 2 * a);
    EXPECT_EQ(flow.on_ack(p, 0, T, t_ok), aimd_action::increase);
    EXPECT_EQ(flow.on_ack(p, 2 * t_ok, T, t_ok), aimd_action::none) << "2t has passed, 2T has not";
    EXPECT_EQ(flow.on_ack(p, 2 * T, T, t_ok), aimd_action::increase);
}
