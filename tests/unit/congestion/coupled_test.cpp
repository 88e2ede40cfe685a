// The fair variant's per-path rates (congestion/coupled.hpp,
// docs/congestion.md "Coupled paths"): each ACK cuts or grows its own path's
// rate; the increase is coupled (a flow's paths together grow by one flow's
// step); packets go to the paths in proportion to their rates.
#include "congestion/coupled.hpp"
#include "fair_params.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>

using namespace laps::congestion;

namespace {

// The fair test parameters with the default increase (3 Gb/s per 10 us).
aimd_params fair()
{
    aimd_params p = laps::test::fair_test_params();
    p.fair.increase_bps = 3e9;
    p.fair.coupled_paths = true;
    return p;
}

constexpr std::uint32_t all_of(unsigned paths)
{
    return (1u << paths) - 1;
}

} // namespace

TEST(CoupledRates, ANewFlowSplitsTheLineRateEvenlyAndDrawsInProportion)
{
    const auto p = fair();
    coupled_rates r;
    r.start(4, p.cap_bps);
    EXPECT_EQ(r.paths(), 4);
    EXPECT_DOUBLE_EQ(r.path_bps(0), 25e9);
    EXPECT_DOUBLE_EQ(r.total_bps(p, all_of(4)), 100e9);
    // An unusable path counts neither in the rate nor in the draw.
    EXPECT_DOUBLE_EQ(r.total_bps(p, 0b1011), 75e9);
    // Uniform draws land on each usable path in proportion to its rate.
    const std::array<double, max_coupled_paths> usable{1, 1, 0, 1};
    std::array<int, 4> hits{};
    for (std::uint32_t i = 0; i < 1000; ++i) {
        const int slot = r.draw(usable, static_cast<std::uint32_t>((static_cast<std::uint64_t>(i) << 32) / 1000));
        ASSERT_GE(slot, 0);
        ++hits[static_cast<std::size_t>(slot)];
    }
    EXPECT_EQ(hits[2], 0);
    EXPECT_NEAR(hits[0], 333, 2);
    EXPECT_NEAR(hits[1], 333, 2);
    EXPECT_NEAR(hits[3], 333, 2);
    EXPECT_EQ(r.draw({}, 12345), -1); // nothing usable
}

// A path whose realVal Alg. 1 keeps doubling (no ACK: a failed link) leaves
// the draw; a queue of a few times the path's delay does not change it.
TEST(CoupledRates, APathFarAboveItsDelayLeavesTheDraw)
{
    EXPECT_DOUBLE_EQ(coupled_rates::latency_factor(2'000, 2'000), 1.0);
    EXPECT_DOUBLE_EQ(coupled_rates::latency_factor(8'000, 2'000), 1.0);  // 4 x: still 1
    EXPECT_DOUBLE_EQ(coupled_rates::latency_factor(16'000, 2'000), 0.25); // 8 x
    EXPECT_DOUBLE_EQ(coupled_rates::latency_factor(64'000, 2'000), 1.0 / 64);
    const auto p = fair();
    coupled_rates r;
    r.start(2, p.cap_bps);
    const std::array<double, max_coupled_paths> factors{1.0, coupled_rates::latency_factor(128'000, 2'000)};
    int on_failing = 0;
    for (std::uint32_t i = 0; i < 1000; ++i) {
        on_failing += r.draw(factors, static_cast<std::uint32_t>((static_cast<std::uint64_t>(i) << 32) / 1000)) == 1;
    }
    EXPECT_NEAR(on_failing, 4, 1); // 1/256 of the other's weight: 0.39% of 1000 draws
}

// An ACK whose path queues above the target cuts that path only, as the fair
// variant cuts a flow (gain x excess per interval), once per window 2t.
TEST(CoupledRates, AQueuedPathIsCutAloneOncePerWindow)
{
    const auto p = fair();
    coupled_rates r;
    r.start(4, 40e9);
    // realVal 5 us (2t = one interval), queue 4 us: 0.8 x (4 - 2) / 4 = 40%.
    EXPECT_EQ(r.on_ack(p, 2, 1'000'000, 5'000, 4'000), aimd_action::decrease);
    EXPECT_DOUBLE_EQ(r.path_bps(2), 6e9);
    EXPECT_DOUBLE_EQ(r.path_bps(0), 10e9);
    EXPECT_DOUBLE_EQ(r.total_bps(p, all_of(4)), 36e9);
    // Within the window: neither another cut nor an increase.
    EXPECT_EQ(r.on_ack(p, 2, 1'009'999, 5'000, 4'000), aimd_action::none);
    EXPECT_EQ(r.on_ack(p, 2, 1'009'999, 5'000, 0), aimd_action::none);
    EXPECT_EQ(r.on_ack(p, 2, 1'010'000, 5'000, 4'000), aimd_action::decrease);
    EXPECT_DOUBLE_EQ(r.path_bps(2), 3.6e9);
    // A cut never takes a path below its share of the flow's floor.
    for (std::int64_t now = 1'020'000; now < 2'000'000; now += 10'000) {
        r.on_ack(p, 2, now, 5'000, 1'000'000);
    }
    EXPECT_DOUBLE_EQ(r.path_bps(2), p.floor_bps / 4);
}

// The coupled increase: each quiet path grows by one flow's step times its
// share of the flow, so all paths together grow by one step per window, no
// more than a flow with one path (RFC 6356's goal), and a path with a small
// share grows little.
TEST(CoupledRates, QuietPathsTogetherGrowByOneFlowsStep)
{
    const auto p = fair();
    coupled_rates r;
    r.start(2, 8e9);
    r.on_ack(p, 1, 1'000'000, 5'000, 1'000'000); // cut path 1 to 2 Gb/s
    ASSERT_DOUBLE_EQ(r.path_bps(1), 2e9);
    // 2t = 1 interval: one step is 3 Gb/s, 4/6 of it to path 0, 2/6 to path 1.
    EXPECT_EQ(r.on_ack(p, 0, 1'010'000, 5'000, 0), aimd_action::increase);
    EXPECT_DOUBLE_EQ(r.path_bps(0), 4e9 + 3e9 * 4.0 / 6.0);
    const double flow = r.path_bps(0) + r.path_bps(1);
    EXPECT_EQ(r.on_ack(p, 1, 1'010'000, 5'000, 0), aimd_action::increase);
    EXPECT_DOUBLE_EQ(r.path_bps(1), 2e9 + 3e9 * 2e9 / flow);
    // A path whose ACKs come less often than once per window (a small
    // share) grows by the time since its last step: 20 us, two intervals.
    const double before = r.path_bps(0);
    const double flow_now = before + r.path_bps(1);
    EXPECT_EQ(r.on_ack(p, 0, 1'030'000, 5'000, 0), aimd_action::increase);
    EXPECT_DOUBLE_EQ(r.path_bps(0), before + 2 * 3e9 * before / flow_now);
}

// A flow never exceeds the line rate: its paths are scaled down together.
TEST(CoupledRates, TheFlowStaysWithinTheLineRate)
{
    const auto p = fair();
    coupled_rates r;
    r.start(2, p.cap_bps);
    for (std::int64_t now = 1'000'000; now < 3'000'000; now += 10'000) {
        r.on_ack(p, 0, now, 5'000, 0);
    }
    EXPECT_LE(r.path_bps(0) + r.path_bps(1), p.cap_bps * (1 + 1e-12));
    EXPECT_DOUBLE_EQ(r.total_bps(p, all_of(2)), p.cap_bps);
}

// A path at its floor whose queue is gone regains its rate in a bounded
// time: after N intervals of increases the step doubles per interval (the
// fair variant's hyper increase, per path).
TEST(CoupledRates, AFlooredPathRecoversInABoundedTime)
{
    const auto p = fair();
    coupled_rates r;
    r.start(1, p.floor_bps);
    std::int64_t now = 1'000'000;
    int intervals = 0;
    while (r.path_bps(0) < 0.9 * p.cap_bps && intervals < 100) {
        r.on_ack(p, 0, now, 5'000, 0);
        now += p.fair.interval_ns;
        ++intervals;
    }
    // N = 5, then doublings from 3 Gb/s: about 5 + log2(100 / 3) + 1 = 12.
    EXPECT_LE(intervals, 13);
}

namespace {

// A toy Rail in-cast (docs/congestion.md "Coupled paths"): the root's two 10 Gb/s ports X and Y. Flow
// A, the root's neighbour, has one path, through X. Flow B has eight: seven
// through X, one through Y. Fluid queues, 1 us steps, an ACK on every path
// of every flow each step. Returns A's and B's average rates and B's share
// on Y over the second half of 100 ms.
struct incast_result {
    double one_path_bps = 0;
    double eight_path_bps = 0;
    double share_on_y = 0;
};

incast_result toy_incast(const aimd_params& p)
{
    coupled_rates a;
    coupled_rates b;
    a.start(1, p.cap_bps);
    b.start(8, p.cap_bps);
    const double capacity = 10e9;
    double x_bits = 0;
    double y_bits = 0;
    const std::int64_t step_ns = 1'000;
    const std::int64_t start = 1'000'000;
    const std::int64_t end = start + 100'000'000;
    incast_result out;
    double samples = 0;
    for (std::int64_t now = start; now < end; now += step_ns) {
        double into_x = a.path_bps(0);
        for (std::uint8_t s = 0; s < 7; ++s) {
            into_x += b.path_bps(s);
        }
        const double into_y = b.path_bps(7);
        const double dt = static_cast<double>(step_ns) / 1e9;
        x_bits = std::max(0.0, x_bits + (std::min(into_x, p.cap_bps) - capacity) * dt);
        y_bits = std::max(0.0, y_bits + (into_y - capacity) * dt);
        const auto x_ns = static_cast<std::int64_t>(x_bits / capacity * 1e9);
        const auto y_ns = static_cast<std::int64_t>(y_bits / capacity * 1e9);
        a.on_ack(p, 0, now, 2'600 + x_ns, x_ns);
        for (std::uint8_t s = 0; s < 7; ++s) {
            b.on_ack(p, s, now, 8'500 + x_ns, x_ns);
        }
        b.on_ack(p, 7, now, 2'600 + y_ns, y_ns);
        if (now >= start + (end - start) / 2) {
            const double b_total = b.total_bps(p, 0xff);
            out.one_path_bps += a.total_bps(p, 1);
            out.eight_path_bps += b_total;
            out.share_on_y += b.path_bps(7) / b_total;
            samples += 1;
        }
    }
    out.one_path_bps /= samples;
    out.eight_path_bps /= samples;
    out.share_on_y /= samples;
    return out;
}

} // namespace

// docs/congestion.md "Coupled paths": the eight-path flow moves
// its traffic to its one path that avoids the neighbour's port, and the two
// flows end near equal rates, both ports in use. Uncoupled (each path
// growing by a whole flow's step) the eight-path flow is eight flows at X
// and takes 3.5 times the one-path flow's rate (15.3 against 4.3 Gb/s).
TEST(CoupledRates, AnEightPathFlowLeavesTheOnePathFlowsPortInAToyIncast)
{
    const incast_result r = toy_incast(fair());
    std::printf("one-path %.2f Gb/s, eight-path %.2f Gb/s, eight-path share on its own port %.2f\n",
                r.one_path_bps / 1e9, r.eight_path_bps / 1e9, r.share_on_y);
    EXPECT_GT(r.share_on_y, 0.8);
    EXPECT_GT(r.one_path_bps / r.eight_path_bps, 0.75);
    EXPECT_LT(r.one_path_bps / r.eight_path_bps, 1 / 0.75);
    // Both ports busy: together at least 85% of their 20 Gb/s.
    EXPECT_GT(r.one_path_bps + r.eight_path_bps, 0.85 * 20e9);
}
