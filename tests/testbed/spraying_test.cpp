// §II-E / §III-E, Eq. 1: latency-weighted spraying over two paths whose
// baseVals are 1:2 (tests/testbed/two_paths_1to2.yaml), one 10 MB flow.
//   - LAPS (normalised beta, alpha 1): the short path carries most, not all.
//     With realVal ~ uncongested delay, Eq. 1 predicts
//     1 / (1 + exp(-(4738 - 2164) / 5148)) = 62% on the short path.
//   - beta = 0: uniform spraying (RPS), 50/50 within 2%.
//   - a large beta: argmax, (nearly) everything on the short path.
#include "helpers.hpp"

using namespace laps;
using namespace laps::test;

namespace {

double short_path_share(const std::string& selection)
{
    const auto s = scenario_from("version: 1\n"
                                 "topology: tests/testbed/two_paths_1to2.yaml\n" +
                                 selection +
                                 "traffic:\n"
                                 "  - flows: [{src: a, dst: b, bytes: 10000000}]\n");
    fabric::simulation sim(s);
    sim.run();
    EXPECT_TRUE(sim.done());
    EXPECT_EQ(sim.bytes_delivered(), sim.bytes_offered());
    // pid 0 is the short path (candidates are listed best first).
    const auto per_path = packets_per_path(sim, 0);
    const double result = share(per_path[0], per_path[0] + per_path[1]);
    std::printf("short path: %llu packets, long path: %llu (%.1f%% short)\n",
                static_cast<unsigned long long>(per_path[0]), static_cast<unsigned long long>(per_path[1]),
                100 * result);
    expect_no_leak(sim);
    return result;
}

} // namespace

TEST(III_E_LatencyWeightedSpraying, ShorterPathCarriesMostButNotAll)
{
    const double s = short_path_share("");
    EXPECT_GT(s, 0.55);
    EXPECT_LT(s, 0.75);
}

TEST(III_E_LatencyWeightedSpraying, BetaZeroSpraysEvenly)
{
    const double s = short_path_share("selection: {beta: {mode: fixed, per_us: 0}}\n");
    EXPECT_NEAR(s, 0.5, 0.02);
}

TEST(III_E_LatencyWeightedSpraying, LargeBetaPutsNearlyAllOnTheShorterPath)
{
    const double s = short_path_share("selection: {beta: {mode: fixed, per_us: 100}}\n");
    EXPECT_GT(s, 0.99);
}
