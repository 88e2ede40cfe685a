#include "congestion/pacer.hpp"

#include <gtest/gtest.h>

using laps::congestion::pacer;

TEST(Pacer, IdleFlowMaySendOneBurstThenIsHeldToItsRate)
{
    const double burst = 4096;
    const double rate = 8e9; // 1 byte per ns
    pacer p(burst, 0);
    int sent = 0;
    while (p.try_send(0, 1024, rate, burst)) {
        ++sent;
    }
    EXPECT_EQ(sent, 4);
    // 1024 bytes at 1 B/ns: ready 1024 ns later, not before.
    EXPECT_FALSE(p.try_send(1023, 1024, rate, burst));
    EXPECT_TRUE(p.try_send(1024, 1024, rate, burst));
}

TEST(Pacer, LongRunRateMatchesTheConfiguredRate)
{
    const double burst = 2048;
    const double rate = 10e9;
    pacer p(burst, 0);
    std::int64_t now = 0;
    std::uint64_t bytes = 0;
    const std::int64_t end = 1'000'000; // 1 ms
    while (now < end) {
        if (p.try_send(now, 1000, rate, burst)) {
            bytes += 1000;
        } else {
            now = p.ready_at(now, 1000, rate, burst);
        }
    }
    // 10 Gb/s for 1 ms is 1.25 MB, plus at most one burst.
    EXPECT_NEAR(static_cast<double>(bytes), 1.25e6, burst + 1000);
}

TEST(Pacer, ReadyAtIsNowWhenTokensSuffice)
{
    pacer p(3000, 0);
    EXPECT_EQ(p.ready_at(5, 1000, 1e9, 3000), 5);
}
