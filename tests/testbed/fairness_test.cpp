// Issue 20: the fairness figures of the summary, and the fair rate control
// (congestion.cc: fair, docs/congestion.md) on the fairness scenario set.
#include "helpers.hpp"

#include "fabric/fairness.hpp"

#include <algorithm>
#include <array>
#include <vector>

using namespace laps;
using namespace laps::test;

namespace {

struct parking_lot_run {
    fabric::run_summary summary;
    double jain_from_flows = 0;
    common::time_ns ideal_sum = 0;
    common::time_ns last_end = 0;
};

parking_lot_run run_parking_lot(const char* cc)
{
    auto s = fabric::load_scenario(std::string(LAPS_SOURCE_ROOT) + "/configs/scenarios/fairness_parking_lot.yaml");
    s.fabric.pfc = true;
    s.algo.congestion.aimd.variant =
        std::string(cc) == "fair" ? congestion::cc_variant::fair : congestion::cc_variant::paper;
    fabric::simulation sim(s);
    sim.run();
    parking_lot_run r;
    r.summary = fabric::summarize(sim);
    std::vector<double> normalised;
    for (const auto& f : sim.flows()) {
        if (f.complete()) {
            normalised.push_back(static_cast<double>(f.ideal_ns) / static_cast<double>(f.fct()));
            r.last_end = std::max(r.last_end, f.end);
        }
        r.ideal_sum += f.ideal_ns;
    }
    r.jain_from_flows = fabric::jain_index(normalised);
    expect_no_leak(sim);
    const auto& f = r.summary.traffic.at(0).fairness;
    std::printf("%s: Jain %.4f, %.1f us = %.3f x bound, slowest %s\n", cc, f.jain, static_cast<double>(f.completion_ns) / 1e3,
                f.bound_ratio, f.slowest.c_str());
    return r;
}

} // namespace

TEST(Fairness, JainIndexIsOneForEqualSharesAndOneOverNForOneTakesAll)
{
    const std::array<double, 4> equal{2, 2, 2, 2};
    const std::array<double, 4> one{5, 0, 0, 0};
    const std::array<double, 2> two_to_one{2, 1};
    EXPECT_DOUBLE_EQ(fabric::jain_index(equal), 1.0);
    EXPECT_DOUBLE_EQ(fabric::jain_index(one), 0.25);
    EXPECT_DOUBLE_EQ(fabric::jain_index(two_to_one), 9.0 / 10.0);
    EXPECT_EQ(fabric::jain_index({}), 0.0);
}

// The summary's figures from the flows: Jain over ideal / FCT, the bound as
// the flows' ideal FCTs over r's one port, groups by number of paths (the
// parking lot's senders have 1, 2 and 8). Lossless, both variants share the
// bottleneck nearly equally (measured: Jain 0.997 paper, 0.998 fair).
TEST(Fairness, ParkingLotSummaryAndNearEqualSharesUnderBothVariants)
{
    for (const char* cc : {"paper", "fair"}) {
        const auto r = run_parking_lot(cc);
        ASSERT_EQ(r.summary.bytes_delivered, r.summary.bytes_offered) << cc;
        const auto& t = r.summary.traffic.at(0);
        const auto& f = t.fairness;
        EXPECT_EQ(t.flows, 3u);
        EXPECT_EQ(t.completed, 3u);
        EXPECT_DOUBLE_EQ(f.jain, r.jain_from_flows);
        EXPECT_EQ(f.bound_ns, r.ideal_sum); // r has one port
        EXPECT_EQ(f.completion_ns, r.last_end);
        EXPECT_DOUBLE_EQ(f.bound_ratio, static_cast<double>(r.last_end) / static_cast<double>(r.ideal_sum));
        ASSERT_EQ(f.by_paths.size(), 3u);
        EXPECT_EQ(f.by_paths[0].paths, 1u);
        EXPECT_EQ(f.by_paths[1].paths, 2u);
        EXPECT_EQ(f.by_paths[2].paths, 8u);
        for (const auto& g : f.by_paths) {
            EXPECT_EQ(g.flows, 1u);
            EXPECT_LE(g.max_fct_us, t.fct_us.max);
        }
        EXPECT_GT(f.jain, 0.99) << cc;
        EXPECT_LT(f.bound_ratio, 1.6) << cc;
    }
}
