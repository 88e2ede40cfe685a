// Loss detection and recovery, Alg. 3 and Fig. 5 of the paper (§III-G).
#include "retransmit/sender_window.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace laps::retransmit;

namespace {

constexpr std::uint8_t p = 1; // "path p" of the example
constexpr std::uint8_t q = 0; // another path

// Sends seqs 0..7 with {2,3,5,7} on p and the rest on q; handle = seq + 100.
sender_window example_window()
{
    sender_window w(16, 2);
    for (seq_t s = 0; s < 8; ++s) {
        const bool on_p = s == 2 || s == 3 || s == 5 || s == 7;
        EXPECT_EQ(w.send_new(on_p ? p : q, s + 100), s);
    }
    return w;
}

std::vector<seq_t> drain_lost(sender_window& w)
{
    std::vector<seq_t> lost;
    seq_t s;
    std::uint64_t h;
    while (w.next_lost(s, h)) {
        EXPECT_EQ(h, s + 100);
        lost.push_back(s);
        w.resent(s, q);
    }
    return lost;
}

} // namespace

// §III-G: outstanding {2,3,5,7} on p; the ACK of 5 on p means 2 and 3 are
// lost, 5 is released and 7 stays outstanding.
TEST(SenderWindow, Alg3AckSkippingOnAPathMarksEarlierOnesLost)
{
    auto w = example_window();
    ASSERT_EQ(w.outstanding_on(p), 4u);
    const auto out = w.on_ack(5, p);
    EXPECT_EQ(out.result, ack_result::released);
    ASSERT_TRUE(out.has_handle);
    EXPECT_EQ(out.handle, 105u);
    EXPECT_EQ(out.newly_lost, 2u);
    EXPECT_EQ(w.outstanding_on(p), 1u); // {7}
    EXPECT_EQ(w.lost_pending(), 2u);
    // Resent in sequence, before new data.
    EXPECT_EQ(drain_lost(w), (std::vector<seq_t>{2, 3}));
}

// §III-G: no ACK on p for 2 x realVal: all its outstanding packets are lost.
TEST(SenderWindow, Alg3TimeoutOnAPathMarksAllItsOutstandingLost)
{
    auto w = example_window();
    w.on_ack(5, p);
    drain_lost(w);
    EXPECT_EQ(w.on_timeout(p), 1u);
    EXPECT_EQ(w.outstanding_on(p), 0u);
    EXPECT_EQ(drain_lost(w), (std::vector<seq_t>{7}));
    EXPECT_EQ(w.on_timeout(p), 0u); // nothing left on p
}

TEST(SenderWindow, AcksOnOtherPathsDoNotDisturbAPath)
{
    auto w = example_window();
    EXPECT_EQ(w.on_ack(4, q).newly_lost, 2u); // 0 and 1 went on q before 4
    EXPECT_EQ(w.outstanding_on(p), 4u);
}

TEST(SenderWindow, LowestUnackedAdvancesOnlyOverReleasedSlots)
{
    auto w = example_window();
    EXPECT_EQ(w.lowest_unacked(), 0u);
    w.on_ack(0, q);
    EXPECT_EQ(w.lowest_unacked(), 1u);
    w.on_ack(2, p);
    EXPECT_EQ(w.lowest_unacked(), 1u);
    w.on_ack(1, q);
    EXPECT_EQ(w.lowest_unacked(), 3u);
}

TEST(SenderWindow, FullWindowStopsNewData)
{
    sender_window w(4, 1);
    for (int i = 0; i < 4; ++i) {
        EXPECT_FALSE(w.full());
        w.send_new(0, 0);
    }
    EXPECT_TRUE(w.full());
    w.on_ack(0, 0);
    EXPECT_FALSE(w.full());
}

// A packet declared lost whose original arrives later: released at once,
// reported as released late (the engine counts a spurious loss); the
// resend's ACK then answers the resend, and a copy of it is a duplicate.
TEST(SenderWindow, LateAckOfALostOriginalIsCountedSpurious)
{
    sender_window w(16, 2);
    w.send_new(p, 100); // 0
    w.send_new(p, 101); // 1
    w.on_timeout(p);    // both lost
    seq_t s;
    std::uint64_t h;
    ASSERT_TRUE(w.next_lost(s, h));
    EXPECT_EQ(s, 0u);
    w.resent(0, q);
    // Original of 0 arrives on p after all.
    auto out = w.on_ack(0, p);
    EXPECT_EQ(out.result, ack_result::released_late);
    EXPECT_TRUE(out.has_handle);
    EXPECT_EQ(out.handle, 100u);
    // Its resend's ACK on q releases nothing more: it answers the resend on
    // q (q's order moves on), and a second copy of it is a duplicate.
    out = w.on_ack(0, q);
    EXPECT_EQ(out.result, ack_result::resend_answered);
    EXPECT_FALSE(out.has_handle);
    EXPECT_TRUE(answers_transmission(out.result));
    EXPECT_EQ(w.on_ack(0, q).result, ack_result::duplicate);
    // Seq 1, lost and not resent yet, arrives too.
    out = w.on_ack(1, p);
    EXPECT_EQ(out.result, ack_result::released_late);
    EXPECT_TRUE(w.idle());
    EXPECT_FALSE(w.next_lost(s, h));
}

TEST(SenderWindow, BogusAcksAreClassifiedAndChangeNothing)
{
    auto w = example_window();
    EXPECT_EQ(w.on_ack(50, p).result, ack_result::unknown);   // never sent
    EXPECT_EQ(w.on_ack(5, q).result, ack_result::wrong_path); // 5 went on p, never resent
    EXPECT_EQ(w.on_ack(5, 7).result, ack_result::unknown);    // no such path
    w.on_ack(5, p);
    EXPECT_EQ(w.on_ack(5, p).result, ack_result::duplicate);
    EXPECT_EQ(w.outstanding_on(p), 1u);
    EXPECT_EQ(w.lost_pending(), 2u); // 2 and 3, by the one real ACK of 5
}

TEST(SenderWindow, SequenceNumbersWrap)
{
    sender_window w(8, 1);
    // Run 2^32 - 3 packets' worth of sequence space quickly: not possible, so
    // exercise the serial arithmetic directly and a window straddling 0.
    EXPECT_TRUE(seq_before(0xfffffffeu, 1u));
    EXPECT_FALSE(seq_before(1u, 0xfffffffeu));
    for (int round = 0; round < 1000; ++round) {
        const seq_t s = w.send_new(0, 0);
        EXPECT_EQ(w.on_ack(s, 0).result, ack_result::released);
    }
    EXPECT_TRUE(w.idle());
}

TEST(SenderWindow, DrainReturnsEveryHeldHandleOnce)
{
    auto w = example_window();
    w.on_ack(5, p); // releases 105, loses 102 and 103
    std::vector<std::uint64_t> freed;
    w.drain([&](std::uint64_t h) { freed.push_back(h); });
    EXPECT_EQ(freed.size(), 7u);
    EXPECT_TRUE(w.idle());
}

// docs/pipeline.md "Receiver guarantees": an ACK counts only if it answers a
// transmission the window records, on a path that transmission took. The
// classification holds over the whole 32-bit space: nothing behind the
// window is a duplicate unless it was released within the last `capacity`.
TEST(SenderWindow, OnlyRecordedTransmissionsAreAnsweredOverAll32Bits)
{
    sender_window w(16, 2);
    for (int i = 0; i < 4; ++i) {
        w.send_new(p, 0);
    }
    // Nothing was ever released: the "behind" half of the space is unknown,
    // not duplicate (0xffffffff is one behind sequence 0).
    EXPECT_EQ(w.on_ack(0xffffffffu, p).result, ack_result::unknown);
    EXPECT_EQ(w.on_ack(0x80000000u, p).result, ack_result::unknown);
    EXPECT_EQ(w.on_ack(0x7fffffffu, p).result, ack_result::unknown);
    EXPECT_EQ(w.on_ack(4, p).result, ack_result::unknown); // next_seq: not sent yet
    EXPECT_EQ(w.on_ack(0, p).result, ack_result::released);
    EXPECT_EQ(w.on_ack(0, p).result, ack_result::duplicate);  // released just now
    EXPECT_EQ(w.on_ack(0xffffffffu, p).result, ack_result::unknown); // never sent
    for (seq_t s = 1; s < 4; ++s) {
        EXPECT_EQ(w.on_ack(s, p).result, ack_result::released);
    }
    // 100 more round trips: only the last 16 released are duplicates.
    for (int i = 0; i < 100; ++i) {
        const seq_t s = w.send_new(q, 0);
        EXPECT_EQ(w.on_ack(s, q).result, ack_result::released);
    }
    const seq_t base = w.lowest_unacked();
    EXPECT_EQ(base, 104u);
    EXPECT_EQ(w.on_ack(base - 1, q).result, ack_result::duplicate);
    EXPECT_EQ(w.on_ack(base - 16, q).result, ack_result::duplicate);
    EXPECT_EQ(w.on_ack(base - 17, q).result, ack_result::unknown);
    EXPECT_EQ(w.on_ack(base + 0x80000000u, q).result, ack_result::unknown);
    for (const ack_result r : {ack_result::duplicate, ack_result::unknown, ack_result::wrong_path}) {
        EXPECT_FALSE(answers_transmission(r));
    }
}

// The same across the space: with 40 released and 8 in flight, every
// 4,099th sequence number of the 2^32 (and the edges of each region) is
// classified as the window's record says, never by which half it is in.
TEST(SenderWindow, ClassificationMatchesTheRecordAcrossTheSpace)
{
    // Released: [32, 40) are the last 8 (the capacity); in flight: [40, 48).
    auto expected = [](seq_t s) {
        if (s >= 40 && s < 48) {
            return ack_result::wrong_path; // on a path never used (1 of 2 below)
        }
        return s >= 32 && s < 40 ? ack_result::duplicate : ack_result::unknown;
    };
    std::vector<seq_t> probes{0, 31, 32, 39, 40, 47, 48, 0x7fffffffu, 0x80000000u, 0x80000027u, 0xffffffffu};
    for (std::uint64_t s = 0; s < (std::uint64_t{1} << 32); s += 4099) {
        probes.push_back(static_cast<seq_t>(s));
    }
    sender_window two(8, 2);
    for (int i = 0; i < 40; ++i) {
        two.on_ack(two.send_new(0, 0), 0);
    }
    for (int i = 0; i < 8; ++i) {
        two.send_new(0, 0);
    }
    for (const seq_t s : probes) {
        ASSERT_EQ(two.on_ack(s, 1).result, expected(s)) << s;
    }
}

TEST(SenderWindow, AnAckOnlyCountsOnAPathItsPacketWasSentOn)
{
    sender_window w(16, 3);
    w.send_new(p, 100); // 0 on p
    w.on_timeout(p);    // lost
    seq_t s;
    std::uint64_t h;
    ASSERT_TRUE(w.next_lost(s, h));
    w.resent(s, q); // resent on q; never on path 2
    EXPECT_EQ(w.on_ack(0, 2).result, ack_result::wrong_path);
    EXPECT_EQ(w.on_ack(0, p).result, ack_result::released_late); // the original, on p
}

// A flow's window is moved once, into its slot (pipeline/flow_state.hpp):
// the packets in flight go with it, and the window left behind owns nothing
// (destroying both frees the arrays once: the sanitizer build checks).
TEST(SenderWindow, AMovedWindowKeepsItsPacketsAndTheSourceOwnsNone)
{
    std::vector<sender_window> windows;
    windows.reserve(2);
    windows.emplace_back(example_window());
    auto& w = windows.back();
    EXPECT_EQ(w.capacity(), 16u);
    EXPECT_EQ(w.in_window(), 8u);
    EXPECT_EQ(w.outstanding_on(p), 4u);
    const auto out = w.on_ack(5, p);
    EXPECT_EQ(out.result, ack_result::released);
    EXPECT_EQ(out.handle, 105u);
    EXPECT_EQ(drain_lost(w), (std::vector<seq_t>{2, 3}));
    windows.emplace_back(std::move(w)); // a vector growing moves its windows too
    EXPECT_EQ(windows.back().outstanding_on(p), 1u); // 7
    EXPECT_EQ(windows.back().outstanding_on(q), 6u); // 0, 1, 4, 6 and the resends of 2 and 3
    EXPECT_EQ(windows.back().on_ack(7, p).result, ack_result::released);
}

// A recycled flow slot: reset() leaves the slots as the last flow left them
// (lost, resent, released early on another path), and the new flow must
// see none of it: ACKs of the old flow's numbers are unknown until the new
// flow sends them, a reused slot answers only on the path the new flow
// used, and nothing is lost or pending.
TEST(SenderWindow, ResetForgetsTheLastFlowWithoutClearingItsSlots)
{
    auto w = example_window();
    ASSERT_EQ(w.on_ack(5, p).newly_lost, 2u); // 2 and 3 lost
    seq_t s;
    std::uint64_t h;
    ASSERT_TRUE(w.next_lost(s, h));
    w.resent(s, q);                                    // 2 again, on q
    EXPECT_EQ(w.on_ack(2, p).result, ack_result::released_late); // the original arrived after all
    std::uint32_t drained = 0;
    w.drain([&drained](std::uint64_t) { ++drained; });
    EXPECT_EQ(drained, 6u); // 0, 1, 3, 4, 6, 7
    w.reset();

    EXPECT_TRUE(w.idle());
    EXPECT_EQ(w.lost_pending(), 0u);
    EXPECT_EQ(w.outstanding_on(p), 0u);
    EXPECT_EQ(w.outstanding_on(q), 0u);
    EXPECT_FALSE(w.next_lost(s, h));
    for (seq_t old = 0; old < 8; ++old) {
        const auto out = w.on_ack(old, p);
        EXPECT_EQ(out.result, ack_result::unknown) << old;
        EXPECT_FALSE(out.has_handle) << old;
    }
    // The new flow's 0..3, all on q: slot 2 held a resend on q and an
    // original on p, slot 3 a lost packet of p.
    for (seq_t n = 0; n < 4; ++n) {
        EXPECT_EQ(w.send_new(q, n + 200, 7), n);
    }
    EXPECT_EQ(w.on_ack(2, p).result, ack_result::wrong_path);
    EXPECT_EQ(w.on_ack(3, p).result, ack_result::wrong_path);
    const auto out = w.on_ack(3, q);
    EXPECT_EQ(out.result, ack_result::released);
    EXPECT_EQ(out.handle, 203u);
    EXPECT_EQ(out.sent_lo32, 7u);
    EXPECT_FALSE(out.was_resent);
    EXPECT_EQ(out.newly_lost, 3u); // 0, 1, 2 were sent on q before it
    EXPECT_EQ(w.lost_pending(), 3u);
    EXPECT_TRUE(w.next_lost(s, h));
    EXPECT_EQ(s, 0u);
    EXPECT_EQ(h, 200u);
}
