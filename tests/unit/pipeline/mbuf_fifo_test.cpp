// The engine's FIFO of mbuf pointers (pipeline/mbuf_fifo.hpp): order, the
// configured capacity below its power-of-two storage, and take() across the
// wrap of the storage (two contiguous copies). Pointers only: no mbuf is
// touched, so no EAL is needed.
#include "pipeline/mbuf_fifo.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

using laps::pipeline::mbuf_fifo;

namespace {

rte_mbuf* fake(std::uintptr_t n)
{
    return reinterpret_cast<rte_mbuf*>(n * 64);
}

} // namespace

TEST(MbufFifo, RefusesPastItsCapacityNotItsStorage)
{
    std::array<rte_mbuf*, mbuf_fifo::slots_for(5)> storage{};
    ASSERT_EQ(storage.size(), 8u);
    mbuf_fifo q(storage, 5);
    for (std::uintptr_t i = 1; i <= 5; ++i) {
        EXPECT_TRUE(q.push(fake(i)));
    }
    EXPECT_TRUE(q.full());
    EXPECT_FALSE(q.push(fake(6)));
    EXPECT_EQ(q.size(), 5u);
    EXPECT_EQ(q.room(), 0u);
}

TEST(MbufFifo, TakeKeepsOrderAcrossTheWrap)
{
    std::array<rte_mbuf*, 8> storage{};
    mbuf_fifo q(storage, 8);
    std::uintptr_t next_in = 1;
    std::uintptr_t next_out = 1;
    // Every start position of the head and every take size up to past the
    // count: each take returns the oldest mbufs, in order, and no more.
    for (int round = 0; round < 40; ++round) {
        while (!q.full()) {
            q.push(fake(next_in++));
        }
        const auto max = static_cast<std::uint16_t>(round % 11);
        std::array<rte_mbuf*, 16> out{};
        const std::uint32_t before = q.size();
        const std::uint16_t n = q.take(out.data(), max);
        ASSERT_EQ(n, std::min<std::uint32_t>(max, before)) << "round " << round;
        ASSERT_EQ(q.size(), before - n);
        for (std::uint16_t i = 0; i < n; ++i) {
            ASSERT_EQ(out[i], fake(next_out++)) << "round " << round << ", mbuf " << i;
        }
        EXPECT_EQ(out[n], nullptr) << "take wrote past what it returned";
    }
    // What is left comes out in order too, and front() agrees with pop().
    while (!q.empty()) {
        ASSERT_EQ(q.front(), fake(next_out));
        ASSERT_EQ(q.pop(), fake(next_out++));
    }
    EXPECT_EQ(next_out, next_in);
}

TEST(MbufFifo, TakeFromAnEmptyOrDefaultFifoTakesNothing)
{
    mbuf_fifo none;
    std::array<rte_mbuf*, 4> out{};
    EXPECT_EQ(none.take(out.data(), 4), 0u);
    std::array<rte_mbuf*, 4> storage{};
    mbuf_fifo q(storage, 4);
    EXPECT_EQ(q.take(out.data(), 4), 0u);
    q.push(fake(1));
    EXPECT_EQ(q.take(out.data(), 0), 0u);
    EXPECT_EQ(q.size(), 1u);
}
