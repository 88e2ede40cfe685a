// In-order delivery through a bounded reorder buffer (§IV-B, Fig. 20).
#include "retransmit/reorder_buffer.hpp"

#include <gtest/gtest.h>

#include <vector>

using laps::retransmit::reorder_buffer;

TEST(ReorderBuffer, DeliversInOrderWhateverTheArrivalOrder)
{
    reorder_buffer b(8);
    std::vector<std::uint64_t> out;
    const auto deliver = [&](std::uint64_t h) { out.push_back(h); };
    // seq 0 arrives second: it must still be accepted (unlike rte_reorder in 22.11).
    EXPECT_TRUE(b.insert(1, 101));
    EXPECT_EQ(b.release(deliver), 0u);
    EXPECT_EQ(b.held(), 1u);
    EXPECT_TRUE(b.insert(0, 100));
    EXPECT_EQ(b.release(deliver), 2u);
    EXPECT_TRUE(b.insert(3, 103));
    EXPECT_TRUE(b.insert(4, 104));
    EXPECT_TRUE(b.insert(2, 102));
    EXPECT_EQ(b.release(deliver), 3u);
    EXPECT_EQ(out, (std::vector<std::uint64_t>{100, 101, 102, 103, 104}));
    EXPECT_EQ(b.held(), 0u);
    EXPECT_EQ(b.next_expected(), 5u);
}

TEST(ReorderBuffer, RefusesLateTooEarlyAndDoubleInserts)
{
    reorder_buffer b(4);
    EXPECT_TRUE(b.insert(0, 1));
    b.release([](std::uint64_t) {});
    EXPECT_FALSE(b.insert(0, 1));  // already delivered
    EXPECT_FALSE(b.insert(5, 1));  // 1 + 4: beyond the window
    EXPECT_TRUE(b.insert(4, 1));   // 1 + 3: last slot
    EXPECT_FALSE(b.insert(4, 2));  // held already
}

TEST(ReorderBuffer, DrainReturnsWhatIsHeld)
{
    reorder_buffer b(16);
    b.insert(3, 7);
    b.insert(9, 8);
    std::vector<std::uint64_t> freed;
    b.drain([&](std::uint64_t h) { freed.push_back(h); });
    EXPECT_EQ(freed.size(), 2u);
    EXPECT_EQ(b.held(), 0u);
}

TEST(ReorderBuffer, ResetAtAStartSequence)
{
    reorder_buffer b(8);
    b.reset(500);
    std::vector<std::uint64_t> out;
    EXPECT_FALSE(b.insert(499, 1));
    EXPECT_TRUE(b.insert(501, 11));
    EXPECT_TRUE(b.insert(500, 10));
    b.release([&](std::uint64_t h) { out.push_back(h); });
    EXPECT_EQ(out, (std::vector<std::uint64_t>{10, 11}));
    EXPECT_EQ(b.next_expected(), 502u);
}

// Gaps before what the sender had acknowledged never fill: what is held
// before it comes out in order, and it becomes the next to deliver.
TEST(ReorderBuffer, SkipsToWhatTheSenderHadAcknowledged)
{
    reorder_buffer b(8);
    b.reset(3);
    std::vector<std::uint64_t> out;
    const auto deliver = [&](std::uint64_t h) { out.push_back(h); };
    ASSERT_TRUE(b.insert(5, 105));
    ASSERT_TRUE(b.insert(7, 107));
    EXPECT_EQ(b.skip_to(2, deliver), 0u) << "behind: nothing moves";
    EXPECT_EQ(b.next_expected(), 3u);
    EXPECT_EQ(b.skip_to(6, deliver), 1u);
    EXPECT_EQ(out, (std::vector<std::uint64_t>{105}));
    EXPECT_EQ(b.next_expected(), 6u);
    EXPECT_EQ(b.held(), 1u) << "7 waits for 6";
    EXPECT_EQ(b.skip_to(100, deliver), 1u);
    EXPECT_EQ(out, (std::vector<std::uint64_t>{105, 107}));
    EXPECT_EQ(b.next_expected(), 100u);
    EXPECT_TRUE(b.behind(99));
    ASSERT_TRUE(b.insert(100, 200));
    EXPECT_EQ(b.release(deliver), 1u);
}

// A recycled flow slot: the frames held behind a gap are drained, and the
// next flow starts where its sender is. reset() writes no slot when nothing
// is held (the drain left them all empty); the new flow may use the very
// slots the old one held frames in.
TEST(ReorderBuffer, ResetAfterDrainReusesTheSlotsTheLastFlowHeld)
{
    reorder_buffer b(8);
    ASSERT_TRUE(b.insert(2, 102));
    ASSERT_TRUE(b.insert(5, 105));
    std::vector<std::uint64_t> freed;
    b.drain([&](std::uint64_t h) { freed.push_back(h); });
    EXPECT_EQ(freed.size(), 2u);
    b.reset(10); // slots 2 and 5 are 10 and 13's
    EXPECT_EQ(b.held(), 0u);
    EXPECT_TRUE(b.insert(13, 213));
    EXPECT_TRUE(b.insert(11, 211));
    std::vector<std::uint64_t> out;
    EXPECT_EQ(b.release([&](std::uint64_t h) { out.push_back(h); }), 0u) << "10 missing";
    EXPECT_TRUE(b.insert(10, 210));
    b.release([&](std::uint64_t h) { out.push_back(h); });
    EXPECT_EQ(out, (std::vector<std::uint64_t>{210, 211}));
    EXPECT_EQ(b.held(), 1u) << "13 waits for 12";
    // Reset while holding (a caller that did not drain): nothing of the old
    // flow is left for the new one to trip on.
    b.reset(0);
    EXPECT_EQ(b.held(), 0u);
    EXPECT_TRUE(b.insert(5, 305)) << "13's slot is free";
}
