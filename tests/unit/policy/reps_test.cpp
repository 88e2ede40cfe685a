// REPS (seed 001, §3 Algorithm 1; §4.3 failures): exploration of the first
// BDP, recycling of clean entropies oldest first, marked ones dropped, the
// circular buffer's bound, and the freeze after a timeout.
#include "policy/reps.hpp"

#include <gtest/gtest.h>

#include <set>

using namespace laps::policy;

namespace {

reps_config config(std::uint32_t explore, std::uint16_t cache = 8, laps::common::time_ns freeze = 0)
{
    reps_config c;
    c.entropies = 256;
    c.cache_size = cache;
    c.explore_packets = explore;
    c.freeze_ns = freeze;
    return c;
}

} // namespace

TEST(REPS_Alg1, TheFirstBdpExploresEveryEntropyInTurn)
{
    reps r(config(300));
    std::set<std::uint16_t> seen;
    for (std::uint32_t seq = 0; seq < 256; ++seq) {
        EXPECT_EQ(r.on_send(seq, 0), seq % 256);
        seen.insert(static_cast<std::uint16_t>(seq));
    }
    EXPECT_EQ(seen.size(), 256u);
    // All tried: even inside the first BDP the cache is used now (line 6's second condition).
    r.on_ack(17, false);
    EXPECT_EQ(r.on_send(256, 0), 17);
}

TEST(REPS_Alg1, ACleanEntropyIsReusedAndAMarkedOneIsNot)
{
    reps r(config(4));
    for (std::uint32_t seq = 0; seq < 4; ++seq) {
        r.on_send(seq, 0); // explores 0..3
    }
    r.on_ack(2, false); // clean: cached
    r.on_ack(3, true);  // marked: dropped
    EXPECT_EQ(r.cached(), 1u);
    EXPECT_EQ(r.on_send(4, 0), 2) << "the clean entropy is recycled";
    EXPECT_EQ(r.cached(), 0u) << "and consumed";
    EXPECT_EQ(r.on_send(5, 0), 4) << "empty cache: the next unexplored entropy, not the marked 3";
    EXPECT_EQ(r.recycled(), 1u);
}

TEST(REPS_Alg1, TheOldestCachedEntropyGoesFirstAndTheBufferKeepsTheNewest)
{
    reps r(config(0, 3));
    for (std::uint16_t e : {10, 11, 12, 13}) {
        r.on_ack(e, false); // four into a buffer of three: 10 is overwritten
    }
    EXPECT_EQ(r.cached(), 3u);
    EXPECT_EQ(r.on_send(0, 0), 11);
    EXPECT_EQ(r.on_send(1, 0), 12);
    EXPECT_EQ(r.on_send(2, 0), 13);
    EXPECT_EQ(r.cached(), 0u);
}

TEST(REPS_Failures, ATimeoutFreezesExplorationAndReusesTheLastGoodEntropy)
{
    reps r(config(1000, 8, 1000));
    r.on_ack(5, false);
    r.on_ack(9, false);
    r.on_timeout(100);
    EXPECT_TRUE(r.frozen(100));
    // Frozen: the cache oldest first, then the last good entropy again and
    // again; no exploration even inside the first BDP.
    EXPECT_EQ(r.on_send(0, 200), 5);
    EXPECT_EQ(r.on_send(1, 200), 9);
    for (std::uint32_t i = 2; i < 10; ++i) {
        EXPECT_EQ(r.on_send(i, 200), 9);
    }
    EXPECT_EQ(r.explored(), 0u);
    r.on_ack(12, false);
    EXPECT_EQ(r.on_send(10, 300), 12);
    EXPECT_EQ(r.on_send(11, 300), 12);
    // The freeze ends: exploration resumes.
    EXPECT_FALSE(r.frozen(1100));
    EXPECT_EQ(r.on_send(12, 1100), 0);
    EXPECT_EQ(r.explored(), 1u);
}

TEST(REPS_Failures, WithoutFreezeATimeoutChangesNothing)
{
    reps r(config(0, 8, 0));
    r.on_ack(5, false);
    r.on_timeout(100);
    EXPECT_FALSE(r.frozen(100));
    EXPECT_EQ(r.on_send(0, 100), 5);
    EXPECT_EQ(r.on_send(1, 100), 0);
}
