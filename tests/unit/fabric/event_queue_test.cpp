// The testbed's event queue (fabric/event_queue.hpp): lanes and heap pop in
// one (time, insertion) order, and lane_ahead() names the events the loop
// prefetches for.
#include "fabric/event_queue.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace laps::fabric;

namespace {

// Pops every event due through `t`, returning (time, target) pairs.
std::vector<std::pair<time_ns, std::uint32_t>> drain(event_queue& q, time_ns t)
{
    std::vector<std::pair<time_ns, std::uint32_t>> out;
    event e;
    while (q.pop_through(t, e)) {
        out.emplace_back(e.at, e.target);
    }
    return out;
}

} // namespace

TEST(EventQueue, LanesAndHeapPopInTimeThenInsertionOrder)
{
    event_queue q;
    q.push_after(0, 100, event_kind::arrival, 1);  // lane 100: t = 100
    q.push(100, event_kind::host_timer, 2);          // heap, same time, pushed later
    q.push_after(0, 50, event_kind::tx_done, 3);    // lane 50: t = 50
    q.push(10, event_kind::flow_start, 4);           // heap: t = 10
    q.push_after(0, 100, event_kind::arrival, 6);   // lane 100: t = 100, after 1 and 2
    q.push_after(20, 100, event_kind::arrival, 5);  // lane 100: t = 120 (`now` never goes back)
    EXPECT_EQ(q.size(), 6u);
    const auto got = drain(q, 110);
    const std::vector<std::pair<time_ns, std::uint32_t>> want{{10, 4}, {50, 3}, {100, 1}, {100, 2}, {100, 6}};
    EXPECT_EQ(got, want);
    EXPECT_EQ(q.size(), 1u) << "t = 120 is not due through 110";
    EXPECT_EQ(drain(q, 200), (std::vector<std::pair<time_ns, std::uint32_t>>{{120, 5}}));
    EXPECT_TRUE(q.empty());
}

TEST(EventQueue, LaneAheadNamesTheLanesLaterEventsAndNothingAfterAHeapPop)
{
    event_queue q;
    for (std::uint32_t i = 0; i < 10; ++i) {
        q.push_after(i, 1000, event_kind::arrival, 100 + i); // one lane, t = 1000 + i
    }
    q.push(5, event_kind::fault, 7); // the heap's only event, due first
    event e;
    ASSERT_TRUE(q.pop_through(2000, e));
    EXPECT_EQ(e.kind, event_kind::fault);
    EXPECT_EQ(q.lane_ahead(1), nullptr) << "the last pop took the heap's top";

    ASSERT_TRUE(q.pop_through(2000, e));
    EXPECT_EQ(e.target, 100u);
    ASSERT_NE(q.lane_ahead(1), nullptr);
    EXPECT_EQ(q.lane_ahead(1)->target, 101u) << "distance 1: the next event of the lane";
    ASSERT_NE(q.lane_ahead(8), nullptr);
    EXPECT_EQ(q.lane_ahead(8)->target, 108u);
    ASSERT_NE(q.lane_ahead(9), nullptr);
    EXPECT_EQ(q.lane_ahead(9)->target, 109u);
    EXPECT_EQ(q.lane_ahead(10), nullptr) << "past the lane's end";

    for (std::uint32_t i = 1; i < 10; ++i) {
        ASSERT_TRUE(q.pop_through(2000, e));
        EXPECT_EQ(e.target, 100u + i);
    }
    EXPECT_EQ(q.lane_ahead(1), nullptr) << "the lane is empty";
    EXPECT_FALSE(q.pop_through(2000, e));
}

TEST(EventQueue, ALaneKeepsItsOrderAcrossTheRingsWrapAndGrowth)
{
    // A lane is a ring (64 slots at first, doubled when full): pops and
    // pushes in turn wrap it, and it grows while wrapped. Events come out
    // in their order, lane_ahead() names the right ones, and the pending
    // ones are all visited once.
    event_queue q;
    std::uint32_t pushed = 0;
    std::uint32_t popped = 0;
    time_ns now = 0;
    event e;
    const auto push = [&](std::uint32_t n) {
        for (std::uint32_t i = 0; i < n; ++i) {
            q.push_after(now++, 1000, event_kind::arrival, pushed++);
        }
    };
    const auto pop = [&](std::uint32_t n) {
        for (std::uint32_t i = 0; i < n; ++i) {
            ASSERT_TRUE(q.pop_through(time_ns{1} << 40, e));
            ASSERT_EQ(e.target, popped) << "pop " << popped;
            ++popped;
            const std::uint32_t waiting = pushed - popped;
            const event* ahead = q.lane_ahead(4);
            if (waiting >= 4) {
                ASSERT_NE(ahead, nullptr) << "at " << popped;
                ASSERT_EQ(ahead->target, popped + 3) << "at " << popped;
            } else {
                ASSERT_EQ(ahead, nullptr) << "at " << popped;
            }
        }
    };
    push(50);
    pop(40);   // the head at slot 40 of 64
    push(40);  // wraps: 50 waiting
    pop(30);
    push(100); // full while wrapped: grows to 128, then 256
    std::uint32_t visited = 0;
    std::uint64_t sum = 0;
    q.for_each_pending([&](const event& p) {
        ++visited;
        sum += p.target;
    });
    EXPECT_EQ(visited, pushed - popped);
    std::uint64_t want = 0;
    for (std::uint32_t t = popped; t < pushed; ++t) {
        want += t;
    }
    EXPECT_EQ(sum, want);
    pop(pushed - popped);
    EXPECT_TRUE(q.empty());
    push(10000); // and a long run through many doublings
    pop(10000);
    EXPECT_TRUE(q.empty());
}
