// The path timeout's round-trip rule (retransmit/rto_estimator.hpp): RFC 6298
// §2's SRTT and RTTVAR, beside Alg. 3's 2 x realVal (§III-G).
#include "retransmit/rto_estimator.hpp"

#include <gtest/gtest.h>

using namespace laps::retransmit;

TEST(RtoEstimator, FirstSampleSeedsMeanAndHalfAsVariation)
{
    rto_estimator e;
    EXPECT_FALSE(e.measured());
    EXPECT_EQ(e.timeout_or(7), 7) << "the initial timeout before a sample (RFC 6298 §2.1)";
    e.on_rtt(100'000);
    EXPECT_EQ(e.srtt(), 100'000);
    EXPECT_EQ(e.rttvar(), 50'000);
    EXPECT_EQ(e.timeout_or(7), 100'000 + 4 * 50'000); // RFC 6298 §2.2
}

TEST(RtoEstimator, FollowsRfc6298Gains)
{
    rto_estimator e;
    e.on_rtt(100'000);
    e.on_rtt(180'000); // |SRTT - R| = 80,000 before SRTT moves
    EXPECT_EQ(e.rttvar(), 50'000 + (80'000 - 50'000) / 4);
    EXPECT_EQ(e.srtt(), 100'000 + 80'000 / 8);
}

// A steady round trip: the variation decays and the timeout closes in on the
// round trip, never below it plus the granularity.
TEST(RtoEstimator, SteadyRoundTripsShrinkTheMarginToTheGranularity)
{
    rto_estimator e;
    for (int i = 0; i < 200; ++i) {
        e.on_rtt(500'000);
    }
    EXPECT_EQ(e.srtt(), 500'000);
    EXPECT_LT(e.rttvar(), 1'000);
    EXPECT_EQ(e.timeout_or(0), 500'000 + rto_estimator::granularity_ns);
}

// A jittery link (round trips of 500 +- 100 us): the timeout stays above
// every round trip seen, which is what keeps a loss-free link from resending.
TEST(RtoEstimator, JitterKeepsTheTimeoutAboveTheRoundTrips)
{
    rto_estimator e;
    const laps::common::time_ns rtts[] = {500'000, 600'000, 400'000, 580'000, 420'000, 600'000, 450'000};
    for (int round = 0; round < 50; ++round) {
        for (const auto r : rtts) {
            e.on_rtt(r);
            EXPECT_GT(e.timeout_or(0), 600'000);
        }
    }
}

TEST(RtoEstimator, IgnoresNonPositiveSamplesAndResets)
{
    rto_estimator e;
    e.on_rtt(0);
    e.on_rtt(-5);
    EXPECT_FALSE(e.measured());
    e.on_rtt(10);
    e.reset();
    EXPECT_FALSE(e.measured());
}
