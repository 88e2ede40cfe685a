// FlowBender (Kabbani et al. 2014; seed 002's baseline): a reroute to a
// random other entropy after N rounds with more than T of the ACKs marked.
#include "policy/flowbender.hpp"

#include <gtest/gtest.h>

using namespace laps::policy;

TEST(FlowBender, ReroutesAfterACongestedRoundOnlyAboveT)
{
    laps::common::rng random(5);
    flowbender f({0.05, 1, 16}, 4);
    // Round 1: 1 of 100 ACKs marked (1% < 5%): stays.
    for (int i = 0; i <= 100; ++i) {
        EXPECT_FALSE(f.on_ack(i == 50, 1000, i * 10, random));
    }
    EXPECT_EQ(f.current(), 4);
    // Round 2: 10 of 100 marked: moves, to another entropy.
    bool moved = false;
    for (int i = 101; i <= 201; ++i) {
        moved = f.on_ack(i % 10 == 0, 1000, i * 10, random) || moved;
    }
    EXPECT_TRUE(moved);
    EXPECT_NE(f.current(), 4);
    EXPECT_EQ(f.reroutes(), 1u);
}

TEST(FlowBender, NeedsNConsecutiveRounds)
{
    laps::common::rng random(6);
    flowbender f({0.05, 2, 16}, 4);
    int reroutes = 0;
    for (int i = 0; i <= 100; ++i) {
        reroutes += f.on_ack(true, 1000, i * 10, random) ? 1 : 0;
    }
    EXPECT_EQ(reroutes, 0) << "one congested round of two";
    for (int i = 101; i <= 201; ++i) {
        reroutes += f.on_ack(true, 1000, i * 10, random) ? 1 : 0;
    }
    EXPECT_EQ(reroutes, 1);
}

TEST(FlowBender, ATimeoutReroutesAtOnce)
{
    laps::common::rng random(8);
    flowbender f({0.05, 3, 16}, 4);
    EXPECT_TRUE(f.on_timeout(random));
    EXPECT_NE(f.current(), 4);
    EXPECT_EQ(f.reroutes(), 1u);
    flowbender single({0.05, 1, 1}, 0);
    EXPECT_FALSE(single.on_timeout(random)) << "one path: nowhere to go";
}
