#pragma once
// The clock offset of one destination (receiver clock minus sender clock,
// docs/design.md §3.7), estimated from the latencies its ACKs report, so that realVal
// can be compared with a computed baseVal although the clocks never agree.
//
// Every sample gives an upper bound of the offset:
//   bound = raw latency - uncongested delay of that packet >= offset,
// because a packet is never faster than its path's uncongested delay. The
// estimate is the lower envelope of those bounds, with three additions that
// real clocks need (docs/pipeline.md "Clock offset"):
//
//  - skew: a receiver clock that runs fast moves the offset up by its rate
//    difference (10 ppm = 10 us per second), which a minimum never follows.
//    The estimate is base + skew x (now - base_at); the skew is learned from
//    the minima of successive buckets (bucket_ns), clamped to max_skew_ppm.
//    Slow clocks need nothing: their samples lower the envelope at once.
//  - expiry: a base older than window_ns is replaced by the minimum of the
//    last bucket, so whatever the skew estimate missed is forgotten within
//    the window (seconds by default: short windows would absorb standing
//    queues into the offset and hide congestion).
//  - a floor from the round trip: an ACK that answers a packet sent once
//    also bounds the offset from below (NTP's argument):
//      raw - (rtt - uncongested delay back) <= offset,
//    because the ACK's way back took at least its uncongested delay. An
//    estimate below the floor is raised to it at once: a receiver clock
//    that runs fast or was set forward is followed within one round trip,
//    without waiting for buckets (offset_raised, or offset_step_forward
//    when the raise exceeds step_ns).
//  - steps: a sample more than step_ns below the prediction re-seeds the
//    estimate at once (a clock set back, a receiver restarted); step_samples
//    consecutive samples more than step_ns above it re-seed it at the
//    lowest of them (a clock set forward), but only when no sample in the
//    last window_ns came with a round-trip floor: with floors, a clock set
//    forward is seen from the floor, and samples far above the estimate
//    are a queue, which under PFC back-pressure lasts hundreds of us.
//
// Samples are normalised for size by the caller (a probe is faster than a
// full frame by its shorter serialisation on every link).
//
// Concurrency: every worker of an instance calls sample() on the same state.
// Fields are relaxed atomics; updates are CAS or plain stores that may race:
// a race can lose one sample or keep a bucket's minimum at a time read a few
// ns off, never produce a value no sample justified. Writes happen only when
// the envelope moves, a bucket rotates or a step is counted: in steady state
// a sample is five loads.

#include "common/time.hpp"

#include <atomic>
#include <cstdint>
#include <limits>

namespace laps::tables {

using common::time_ns;

struct clock_offset_params {
    time_ns bucket_ns = 32 * common::ns_per_ms;   // skew learning period
    time_ns window_ns = common::ns_per_s;         // a base older than this expires
    time_ns step_ns = 100 * common::ns_per_us;    // a jump this large is a clock step
    std::uint32_t step_samples = 8;               // consecutive samples that confirm a step forward
    std::uint32_t max_skew_ppm = 200;             // 0: no skew (a plain expiring minimum)
};

struct clock_offset_state {
    static constexpr time_ns none = std::numeric_limits<time_ns>::max();

    std::atomic<time_ns> base{none};    // the offset at base_at
    std::atomic<time_ns> base_at{0};
    std::atomic<std::int64_t> skew_q32{0}; // d offset / d t, in 2^-32 ns per ns
    std::atomic<time_ns> bucket_start{0};
    std::atomic<time_ns> bucket_min{none}; // lowest bound of the current bucket
    std::atomic<time_ns> bucket_min_at{0};
    std::atomic<std::uint32_t> run{0};   // consecutive samples above the prediction + step
    std::atomic<time_ns> run_min{none};
    // The latest sample that came with a round-trip floor (none: never,
    // rewritten at most once per step_ns). While floors keep coming, a run
    // of samples without one is a queue: a clock set forward raises the
    // floor of the next timed sample.
    std::atomic<time_ns> floor_seen_at{none};
    // The previous bucket's minimum and when it was seen (skew learning).
    std::atomic<time_ns> prev_min{none};
    std::atomic<time_ns> prev_min_at{0};

    // The offset the estimate predicts at `now` (none before any sample).
    time_ns predict(time_ns now) const noexcept
    {
        const time_ns b = base.load(std::memory_order_relaxed);
        if (b == none) {
            return none;
        }
        const time_ns age = now - base_at.load(std::memory_order_relaxed);
        return b + skew_of(age, skew_q32.load(std::memory_order_relaxed));
    }

    // skew x age without overflow for any age (a long idle set).
    static time_ns skew_of(time_ns age, std::int64_t q32) noexcept
    {
        return static_cast<time_ns>((static_cast<__int128>(age) * q32) >> 32);
    }
};

// What a sample did, for the engine's counters.
enum clock_offset_event : std::uint8_t {
    offset_seeded = 1,     // the first sample of the set
    offset_step_back = 2,  // a sample far below the prediction re-seeded it
    offset_step_forward = 4, // step_samples far above it re-seeded it
    offset_expired = 8,    // the base aged out of the window: re-based on the last bucket
    offset_skew_updated = 16,
    offset_implausible = 32, // (path_table) the latency was above the plausible maximum: not recorded
    offset_raised = 64,    // the round-trip floor lifted the estimate (by less than step_ns)
};

// No round trip with this sample (a resent packet's ACK, a PROBE_ACK).
inline constexpr time_ns no_offset_floor = std::numeric_limits<time_ns>::min();

struct clock_offset_sample {
    time_ns offset = 0;     // the estimate to remove from this sample
    std::uint8_t events = 0;
};

// One sample: `bound` = raw latency - the packet's uncongested delay, at
// `now`; `floor` = raw latency - (round trip - uncongested delay back), or
// no_offset_floor.
clock_offset_sample sample_clock_offset(clock_offset_state& s, const clock_offset_params& p, time_ns bound,
                                        time_ns now, time_ns floor = no_offset_floor) noexcept;

} // namespace laps::tables
