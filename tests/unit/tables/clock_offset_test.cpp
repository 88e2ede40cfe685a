// The clock offset estimator (tables/clock_offset.hpp, docs/pipeline.md
// "Clock offset"): docs/design.md §3.7 and paper §II-C, "no need for the
// nodes to synchronize their clocks", held on clocks that drift and step.
#include "tables/clock_offset.hpp"
#include "tables/path_table.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

using namespace laps::tables;
using laps::common::ns_per_ms;
using laps::common::ns_per_s;
using laps::common::ns_per_us;

namespace {

// Samples every `gap` ns from `from` to `to` of a path whose receiver clock
// reads `offset(t)` ahead; each sample queues 0..max_queue ns on the way out
// (one in eight not at all) and 0..max_back ns on the way back, and a round
// trip is known when `with_floor`. Returns the worst |estimate - truth|
// after the first `settle` ns.
template <typename Offset>
time_ns run(clock_offset_state& s, const clock_offset_params& p, Offset offset, time_ns from, time_ns to,
            time_ns gap, bool with_floor, time_ns settle = 0, std::uint8_t* events_seen = nullptr)
{
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<time_ns> out_queue(0, 3000);
    std::uniform_int_distribution<time_ns> back_queue(0, 500);
    time_ns worst = 0;
    for (time_ns t = from; t < to; t += gap) {
        const time_ns queued = rng() % 8 == 0 ? 0 : out_queue(rng);
        const time_ns bound = offset(t) + queued;                      // raw - uncongested out
        const time_ns floor = with_floor ? offset(t) - back_queue(rng) : no_offset_floor; // raw - (rtt - uncongested back)
        const auto r = sample_clock_offset(s, p, bound, t, floor);
        if (events_seen != nullptr) {
            *events_seen |= r.events;
        }
        if (t - from >= settle) {
            worst = std::max(worst, std::abs(r.offset - offset(t)));
        }
    }
    return worst;
}

} // namespace

TEST(ClockOffset, ConstantOffsetIsTheLowerEnvelopeExactly)
{
    clock_offset_state s;
    const clock_offset_params p;
    std::uint8_t events = 0;
    const auto worst = run(s, p, [](time_ns) { return 250'000; }, 0, 100 * ns_per_ms, 10 * ns_per_us, true,
                           100 * ns_per_us, &events);
    EXPECT_EQ(worst, 0) << "one unqueued sample in eight pins the offset";
    EXPECT_EQ(s.predict(100 * ns_per_ms), 250'000);
    EXPECT_EQ(events & (offset_step_back | offset_step_forward), 0) << "no step on a steady clock";
}

// A receiver 100 ppm fast adds 100 ns per ms. The minimum alone never
// follows it (the error grows with time); the round-trip floor keeps the
// error within the way back's queueing, at once.
TEST(ClockOffset, FastReceiverIsFollowedWithinOneRoundTripByTheFloor)
{
    const auto fast = [](time_ns t) { return -40'000 + t / 10'000; }; // +100 ppm
    clock_offset_params no_skew;
    no_skew.max_skew_ppm = 0;
    clock_offset_state minimum_only;
    const auto drifted = run(minimum_only, no_skew, fast, 0, 200 * ns_per_ms, 10 * ns_per_us, false);
    EXPECT_GT(drifted, 15 * ns_per_us) << "the envelope alone lags the clock by drift x age";

    clock_offset_state with_floor;
    std::uint8_t events = 0;
    const auto followed =
        run(with_floor, no_skew, fast, 0, 200 * ns_per_ms, 10 * ns_per_us, true, 100 * ns_per_us, &events);
    EXPECT_LE(followed, 500) << "off by at most the ACKs' queueing on the way back";
    EXPECT_NE(events & offset_raised, 0);
}

// Without round trips (probes, resent packets) skew is learned from bucket
// minima: after a few buckets the estimate tracks a 100 ppm clock.
TEST(ClockOffset, FastReceiverWithoutRoundTripsIsFollowedByTheLearnedSkew)
{
    const auto fast = [](time_ns t) { return 7'000 + t / 10'000; };
    clock_offset_state s;
    const clock_offset_params p; // 32 ms buckets, skew up to 200 ppm
    std::uint8_t events = 0;
    const auto worst = run(s, p, fast, 0, 2 * ns_per_s, 10 * ns_per_us, false, ns_per_s, &events);
    EXPECT_LE(worst, 2 * ns_per_us) << "after 1 s the skew is learned";
    EXPECT_NE(events & offset_skew_updated, 0);
    // The learned skew is close to 100 ppm (2^32 / 10^4 per ns).
    const double ppm = static_cast<double>(s.skew_q32.load()) / 4294967296.0 * 1e6;
    EXPECT_NEAR(ppm, 100.0, 15.0);
}

// A slow receiver lowers the bounds: the envelope follows it sample by
// sample, within the gap between two unqueued samples.
TEST(ClockOffset, SlowReceiverIsFollowedByTheEnvelope)
{
    const auto slow = [](time_ns t) { return 900'000 - t / 10'000; }; // -100 ppm
    clock_offset_state s;
    const clock_offset_params p;
    const auto worst = run(s, p, slow, 0, 500 * ns_per_ms, 10 * ns_per_us, false, 100 * ns_per_us);
    EXPECT_LE(worst, 3'000);
}

TEST(ClockOffset, ClockSetBackReseedsOnTheFirstSample)
{
    clock_offset_state s;
    const clock_offset_params p;
    run(s, p, [](time_ns) { return 2 * ns_per_ms; }, 0, 10 * ns_per_ms, 10 * ns_per_us, false);
    // The receiver's clock goes back 1 ms: the next sample is far below.
    const auto r = sample_clock_offset(s, p, ns_per_ms + 40, 10 * ns_per_ms);
    EXPECT_NE(r.events & offset_step_back, 0);
    EXPECT_EQ(r.offset, ns_per_ms + 40);
    EXPECT_EQ(s.predict(10 * ns_per_ms), ns_per_ms + 40);
}

TEST(ClockOffset, ClockSetForwardNeedsStepSamplesWithoutRoundTrips)
{
    clock_offset_state s;
    const clock_offset_params p; // 8 samples
    run(s, p, [](time_ns) { return 0; }, 0, 10 * ns_per_ms, 10 * ns_per_us, false);
    time_ns t = 10 * ns_per_ms;
    for (std::uint32_t i = 1; i < p.step_samples; ++i, t += ns_per_us) {
        const auto r = sample_clock_offset(s, p, ns_per_ms + 100 * i, t);
        EXPECT_EQ(r.events & offset_step_forward, 0) << "sample " << i << ": could still be a queue";
        EXPECT_EQ(r.offset, 0);
    }
    const auto r = sample_clock_offset(s, p, ns_per_ms + 5000, t);
    EXPECT_NE(r.events & offset_step_forward, 0);
    EXPECT_EQ(r.offset, ns_per_ms + 100) << "re-seeded at the lowest sample of the run";
}

// A queue far longer than step_ns (PFC back-pressure in an in-cast held
// 80-250 us in the testbed) whose samples carry a round trip is a queue,
// not a clock set forward: the round-trip floor did not move. Taken for a
// step, the estimate absorbed the queue and realVal hid it (the testbed's
// in-casts under PFC made thousands of such steps per run, and as many false
// steps back when the queue drained: docs/pipeline.md "Clock offset").
TEST(ClockOffset, ALongQueueWithRoundTripsIsNotAStep)
{
    clock_offset_state s;
    const clock_offset_params p;
    run(s, p, [](time_ns) { return 0; }, 0, 10 * ns_per_ms, 10 * ns_per_us, true);
    time_ns t = 10 * ns_per_ms;
    for (std::uint32_t i = 0; i < 20 * p.step_samples; ++i, t += ns_per_us) {
        // 150-250 us queued on the way out, nothing on the way back.
        const auto r = sample_clock_offset(s, p, 150 * ns_per_us + 500 * (i % 200), t, -100);
        EXPECT_EQ(r.events & (offset_step_forward | offset_step_back | offset_raised), 0) << "sample " << i;
        EXPECT_EQ(r.offset, 0) << "sample " << i;
    }
    // Resent packets' ACKs carry no round trip: while floors keep coming
    // (within window_ns), a run of them far above is the same queue.
    for (std::uint32_t i = 0; i < 4 * p.step_samples; ++i, t += ns_per_us) {
        const auto r = sample_clock_offset(s, p, 200 * ns_per_us, t);
        EXPECT_EQ(r.events & offset_step_forward, 0) << "untimed sample " << i;
        EXPECT_EQ(r.offset, 0);
    }
    // Once the queue drains, samples sit on the old envelope: no step back.
    const auto r = sample_clock_offset(s, p, 200, t, -100);
    EXPECT_EQ(r.events & offset_step_back, 0);
    EXPECT_EQ(r.offset, 0);
}

TEST(ClockOffset, ClockSetForwardIsSeenAtOnceWithARoundTrip)
{
    clock_offset_state s;
    const clock_offset_params p;
    run(s, p, [](time_ns) { return 0; }, 0, 10 * ns_per_ms, 10 * ns_per_us, true);
    const auto r = sample_clock_offset(s, p, ns_per_ms + 900, 10 * ns_per_ms, ns_per_ms - 200);
    EXPECT_NE(r.events & offset_step_forward, 0);
    EXPECT_EQ(r.offset, ns_per_ms - 200);
}

TEST(ClockOffset, AFloorAboveTheUpperBoundIsIgnored)
{
    clock_offset_state s;
    const clock_offset_params p;
    sample_clock_offset(s, p, 5'000, 0);
    // Inconsistent bounds (a mistaken round trip): nothing is raised.
    const auto r = sample_clock_offset(s, p, 5'100, ns_per_us, 90'000);
    EXPECT_EQ(r.events & (offset_raised | offset_step_forward), 0);
    EXPECT_EQ(r.offset, 5'000);
}

TEST(ClockOffset, AnOldBaseExpiresAfterTheWindow)
{
    clock_offset_state s;
    clock_offset_params p;
    p.max_skew_ppm = 0;
    std::uint8_t events = 0;
    // A low outlier at t = 0 (a packet that beat its table's uncongested delay)...
    sample_clock_offset(s, p, -50'000, 0);
    run(s, p, [](time_ns) { return 0; }, ns_per_us, 3 * ns_per_s / 2, 50 * ns_per_us, false, 0, &events);
    EXPECT_NE(events & offset_expired, 0);
    EXPECT_EQ(s.predict(3 * ns_per_s / 2), 0) << "...is forgotten once the window has passed";
}

// §III-D with a probe among DATA: an 80-byte probe crosses each of 6 links
// (944 bytes x 80 ps) = 75.5 ns faster than the 1 KB frame baseVal assumes.
// Normalised, it does not lower the envelope and the next DATA sample reads
// its true delay; unnormalised it would read 453 ns of phantom queueing.
TEST(ClockOffset, III_D_AProbeAmongDataDoesNotBiasTheOffset)
{
    table_spec spec;
    pit_row r;
    r.pid = 0;
    r.base_ns = 8'000;
    r.uncongested_ns = 6'000;
    r.hop_count = 6;
    spec.pit = {r};
    spec.pst = {{*address::parse("10.0.0.2"), {0}}};
    path_table_options o;
    o.pit_capacity = 8;
    o.link_ps_per_byte = 80;
    for (const bool normalise : {true, false}) {
        path_table t(spec, o);
        const time_ns offset = 123'456;
        const std::uint32_t probe = normalise ? 80 : 0;
        t.record_latency(0, offset + 6'000, 0, 1024);
        t.record_latency(0, offset + 6'000 - 453, ns_per_us, probe);
        t.record_latency(0, offset + 6'000, 2 * ns_per_us, 1024);
        if (normalise) {
            EXPECT_EQ(t.path(0).real(), 6'000);
        } else {
            EXPECT_EQ(t.path(0).real(), 6'453);
        }
    }
}
