#include "congestion/pacer.hpp"

#include <gtest/gtest.h>

using laps::congestion::pace_rate;
using laps::congestion::pacer;

TEST(Pacer, IdleFlowMaySendOneBurstThenIsHeldToItsRate)
{
    const std::uint32_t burst = 4096;
    const pace_rate rate = pace_rate::from_bps(8e9); // 1 byte per ns
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
    const std::uint32_t burst = 2048;
    for (const double bps : {1e8, 10e9, 100e9, 400e9}) {
        const pace_rate rate = pace_rate::from_bps(bps);
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
        // bps for 1 ms, plus at most one burst and one packet (the last
        // send may land at `end`).
        EXPECT_NEAR(static_cast<double>(bytes), bps / 8e3, burst + 1000) << bps;
    }
}

TEST(Pacer, ReadyAtIsNowWhenTokensSuffice)
{
    pacer p(3000, 0);
    EXPECT_EQ(p.ready_at(5, 1000, pace_rate::from_bps(1e9), 3000), 5);
}

// The fixed-point rate: exact to 2^-24 byte per ns, never 0, capped.
TEST(Pacer, FixedPointRateRoundTripsAndIsBounded)
{
    for (const double bps : {1e8, 1e9, 25e9, 100e9, 800e9}) {
        EXPECT_NEAR(pace_rate::from_bps(bps).bps(), bps, 8e9 / pace_rate::one) << bps;
    }
    EXPECT_EQ(pace_rate::from_bps(0).q24, 1u);
    EXPECT_EQ(pace_rate::from_bps(1e15).q24, pace_rate::most);
    // After a long idle time the bucket is full, no more: no overflow.
    pacer p(4096, 0);
    const pace_rate fast = pace_rate::from_bps(1e15);
    EXPECT_TRUE(p.try_send(std::int64_t{1} << 62, 4096, fast, 4096));
    EXPECT_FALSE(p.try_send(std::int64_t{1} << 62, 1, fast, 4096));
}
