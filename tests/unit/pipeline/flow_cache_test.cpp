// The exact-match cache in front of the flow tables (pipeline/flow_cache.hpp):
// it proposes the slot a hash was last found at, one entry per hash & mask,
// and compares keys byte for byte.
#include "pipeline/flow_cache.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory_resource>

using laps::pipeline::flow_cache;

namespace {

struct key24 {
    std::array<std::uint64_t, 3> words{};
};

} // namespace

TEST(FlowCache, HoldsTwiceTheFlowsInAPowerOfTwoUpToItsCap)
{
    auto* memory = std::pmr::get_default_resource();
    EXPECT_EQ(flow_cache(1, memory).entries(), 2u);
    EXPECT_EQ(flow_cache(1000, memory).entries(), 2048u);
    EXPECT_EQ(flow_cache(1024, memory).entries(), 2048u);
    EXPECT_EQ(flow_cache(1u << 20, memory).entries(), flow_cache::max_entries);
}

TEST(FlowCache, FindsWhatItRememberedAndNothingElse)
{
    flow_cache cache(8, std::pmr::get_default_resource()); // 16 entries
    EXPECT_EQ(cache.find(5), flow_cache::none);
    EXPECT_EQ(cache.find(0), flow_cache::none); // an empty entry's hash is 0: still no slot
    cache.remember(5, 3);
    EXPECT_EQ(cache.find(5), 3u);
    // Same entry (5 + 16), another hash: not this key's slot.
    EXPECT_EQ(cache.find(21), flow_cache::none);
    cache.remember(21, 7); // replaces the entry
    EXPECT_EQ(cache.find(21), 7u);
    EXPECT_EQ(cache.find(5), flow_cache::none);
}

TEST(FlowCache, ForgetsOnlyTheSlotItWasToldOf)
{
    flow_cache cache(8, std::pmr::get_default_resource());
    cache.remember(9, 2);
    cache.forget(9, 4); // another slot: the entry stays
    cache.forget(25, 2); // another hash in the same entry: stays
    EXPECT_EQ(cache.find(9), 2u);
    cache.forget(9, 2);
    EXPECT_EQ(cache.find(9), flow_cache::none);
}

TEST(FlowCache, KeysDifferingInAnyByteAreNotTheSame)
{
    key24 a;
    a.words = {0x0102030405060708ULL, 0x1112131415161718ULL, 0x2122232425262728ULL};
    EXPECT_TRUE(flow_cache::same_key(a, a));
    for (std::size_t byte = 0; byte < sizeof(key24); ++byte) {
        key24 b = a;
        reinterpret_cast<std::uint8_t*>(&b)[byte] ^= 0x40;
        EXPECT_FALSE(flow_cache::same_key(a, b)) << "byte " << byte;
    }
}
