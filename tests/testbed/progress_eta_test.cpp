// The testbed's progress bar: the estimate of the wall time left (docs/testbed.md, Running).
#include "fabric/progress.hpp"

#include <gtest/gtest.h>

namespace laps::fabric {
namespace {

TEST(progress_eta, steady_rate)
{
    eta_estimator e;
    EXPECT_FALSE(e.remaining().has_value());
    e.add(0.0, 0.0);
    e.add(2.0, 0.2); // 10% per second: 8 s left
    ASSERT_TRUE(e.remaining().has_value());
    EXPECT_NEAR(*e.remaining(), 8.0, 1e-9);
}

TEST(progress_eta, follows_the_recent_rate)
{
    // Slow for 20 s (1%/s), then fast (5%/s): the window of 10 s sees the
    // fast part only, where a whole-run average would say ~24 s.
    eta_estimator e(10.0);
    for (int t = 0; t <= 20; ++t) {
        e.add(t, 0.01 * t);
    }
    for (int t = 21; t <= 32; ++t) {
        e.add(t, 0.20 + 0.05 * (t - 20));
    }
    ASSERT_TRUE(e.remaining().has_value());
    EXPECT_NEAR(*e.remaining(), (1.0 - 0.80) / 0.05, 0.5);
}

TEST(progress_eta, stalled_and_done)
{
    eta_estimator e;
    e.add(0.0, 0.5);
    e.add(5.0, 0.5);
    EXPECT_FALSE(e.remaining().has_value()); // nothing delivered: no estimate
    e.add(6.0, 1.0);
    EXPECT_EQ(*e.remaining(), 0.0);
    EXPECT_EQ(format_eta(std::nullopt), "?");
    EXPECT_EQ(format_eta(42.4), "42 s");
    EXPECT_EQ(format_eta(185.0), "3 min 05 s");
    EXPECT_EQ(format_eta(3720.0), "1 h 02 min");
}

} // namespace
} // namespace laps::fabric
