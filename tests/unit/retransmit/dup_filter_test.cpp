// Receiver duplicate detection (§II-F: duplicates are ACKed and dropped).
#include "retransmit/dup_filter.hpp"

#include <gtest/gtest.h>

using namespace laps::retransmit;

TEST(DupFilter, FlagsADuplicateInAnyOrder)
{
    dup_filter f(256);
    EXPECT_EQ(f.on_receive(3), receive_verdict::fresh);
    EXPECT_EQ(f.on_receive(0), receive_verdict::fresh);
    EXPECT_EQ(f.on_receive(3), receive_verdict::duplicate);
    EXPECT_EQ(f.on_receive(1), receive_verdict::fresh);
    EXPECT_EQ(f.on_receive(2), receive_verdict::fresh);
    EXPECT_EQ(f.base(), 4u);
    EXPECT_EQ(f.on_receive(0), receive_verdict::duplicate); // below base
    EXPECT_EQ(f.on_receive(2), receive_verdict::duplicate);
}

TEST(DupFilter, BeyondTheWindowIsReportedNotTracked)
{
    dup_filter f(64);
    EXPECT_EQ(f.on_receive(64), receive_verdict::beyond_window);
    EXPECT_EQ(f.on_receive(63), receive_verdict::fresh);
    EXPECT_EQ(f.on_receive(63), receive_verdict::duplicate);
}

TEST(DupFilter, SlidesAcrossManyWindowsAndWraps)
{
    dup_filter f(128);
    // Deliver 100000 packets in pairs swapped: 1,0,3,2,...
    for (std::uint32_t s = 0; s < 100'000; s += 2) {
        ASSERT_EQ(f.on_receive(s + 1), receive_verdict::fresh);
        ASSERT_EQ(f.on_receive(s), receive_verdict::fresh);
        ASSERT_EQ(f.on_receive(s + 1), receive_verdict::duplicate);
    }
    EXPECT_EQ(f.base(), 100'000u);
}

// A receiver that picks a flow up mid-stream (DATA's window offset) starts
// its window there: everything before counts as received.
TEST(DupFilter, ResetAtAStartSequence)
{
    dup_filter f(64);
    f.on_receive(0);
    f.reset(1000);
    EXPECT_EQ(f.base(), 1000u);
    EXPECT_EQ(f.on_receive(999), receive_verdict::duplicate);
    EXPECT_EQ(f.on_receive(1001), receive_verdict::fresh);
    EXPECT_EQ(f.on_receive(1000), receive_verdict::fresh);
    EXPECT_EQ(f.base(), 1002u);
    EXPECT_EQ(f.on_receive(1000 + 64 + 2), receive_verdict::beyond_window);
}

// What the sender had acknowledged (seq - window_offset) is never sent again:
// the base moves to it, over what arrived early, and only forward.
TEST(DupFilter, AdvancesToWhatTheSenderHadAcknowledged)
{
    dup_filter f(64);
    f.reset(10);
    EXPECT_EQ(f.on_receive(14), receive_verdict::fresh); // early: 10-13 missing
    EXPECT_EQ(f.on_receive(15), receive_verdict::fresh);
    EXPECT_FALSE(f.advance_to(9)) << "behind the base";
    EXPECT_FALSE(f.advance_to(10));
    EXPECT_TRUE(f.advance_to(14));
    EXPECT_EQ(f.base(), 16u) << "over 14 and 15, which arrived early";
    EXPECT_EQ(f.on_receive(13), receive_verdict::duplicate);
    EXPECT_EQ(f.on_receive(16), receive_verdict::fresh);
    EXPECT_EQ(f.on_receive(200), receive_verdict::beyond_window);
    EXPECT_TRUE(f.advance_to(1000)); // more than a window: nothing remembered survives
    EXPECT_EQ(f.base(), 1000u);
    for (std::uint32_t s = 1000; s < 1064; ++s) {
        EXPECT_EQ(f.on_receive(s), receive_verdict::fresh) << s;
    }
    EXPECT_EQ(f.base(), 1064u);
}
