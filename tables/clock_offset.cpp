#include "tables/clock_offset.hpp"

#include <algorithm>

namespace laps::tables {

namespace {

constexpr auto relaxed = std::memory_order_relaxed;
constexpr time_ns none = clock_offset_state::none;

// Lowers `a` to `v`; whether this call did.
bool lower(std::atomic<time_ns>& a, time_ns v) noexcept
{
    time_ns current = a.load(relaxed);
    while (v < current) {
        if (a.compare_exchange_weak(current, v, relaxed)) {
            return true;
        }
    }
    return false;
}

// A run of samples far above the estimate ended (or never was).
void end_run(clock_offset_state& s) noexcept
{
    if (s.run.load(relaxed) != 0) {
        s.run.store(0, relaxed);
        s.run_min.store(none, relaxed);
    }
}

// Everything learned so far is discarded: the clock jumped.
void reseed(clock_offset_state& s, time_ns offset, time_ns now) noexcept
{
    s.base.store(offset, relaxed);
    s.base_at.store(now, relaxed);
    s.bucket_start.store(now, relaxed);
    s.bucket_min.store(offset, relaxed);
    s.bucket_min_at.store(now, relaxed);
    s.prev_min.store(none, relaxed);
    s.run.store(0, relaxed);
    s.run_min.store(none, relaxed);
}

// The skew from two bucket minima, folded into the current estimate.
std::int64_t learn_skew(std::int64_t current, time_ns from, time_ns from_at, time_ns to, time_ns to_at,
                        std::uint32_t max_ppm) noexcept
{
    const __int128 slope = (static_cast<__int128>(to - from) * (static_cast<__int128>(1) << 32)) / (to_at - from_at);
    const __int128 limit = (static_cast<__int128>(max_ppm) << 32) / 1000000;
    const auto clamped = static_cast<std::int64_t>(std::clamp(slope, -limit, limit));
    // A quarter of the way: one bucket whose minimum caught a queue moves
    // the skew by a quarter of its error, a real skew is reached in a few.
    return current + (clamped - current) / 4;
}

} // namespace

clock_offset_sample sample_clock_offset(clock_offset_state& s, const clock_offset_params& p, time_ns bound,
                                        time_ns now, time_ns floor) noexcept
{
    clock_offset_sample out;
    // Bounds that contradict each other (a floor above the upper bound)
    // mean the path's delays are not what the table says: trust neither.
    if (floor > bound) {
        floor = no_offset_floor;
    }
    time_ns predicted = s.predict(now);
    if (predicted == none) {
        time_ns expected = none;
        if (s.base.compare_exchange_strong(expected, bound, relaxed)) {
            reseed(s, bound, now);
            out.offset = bound;
            out.events = offset_seeded;
            return out;
        }
        predicted = s.predict(now); // another worker seeded it first
    }

    // Bucket rotation, by one worker: learn the skew, expire an old base.
    time_ns start = s.bucket_start.load(relaxed);
    if (now - start >= p.bucket_ns && s.bucket_start.compare_exchange_strong(start, now, relaxed)) {
        const time_ns closed = s.bucket_min.load(relaxed);
        const time_ns closed_at = s.bucket_min_at.load(relaxed);
        s.bucket_min.store(bound, relaxed);
        s.bucket_min_at.store(now, relaxed);
        if (closed != none) {
            const time_ns prev = s.prev_min.load(relaxed);
            const time_ns prev_at = s.prev_min_at.load(relaxed);
            std::int64_t skew = s.skew_q32.load(relaxed);
            if (p.max_skew_ppm != 0 && prev != none && closed_at - prev_at >= p.bucket_ns / 2) {
                skew = learn_skew(skew, prev, prev_at, closed, closed_at, p.max_skew_ppm);
                s.skew_q32.store(skew, relaxed);
                out.events |= offset_skew_updated;
            }
            s.prev_min.store(closed, relaxed);
            s.prev_min_at.store(closed_at, relaxed);
            if (now - s.base_at.load(relaxed) > p.window_ns) {
                s.base.store(closed + clock_offset_state::skew_of(now - closed_at, skew), relaxed);
                s.base_at.store(now, relaxed);
                out.events |= offset_expired;
            }
        }
        predicted = s.predict(now);
    } else if (bound < s.bucket_min.load(relaxed) && lower(s.bucket_min, bound)) {
        s.bucket_min_at.store(now, relaxed);
    }

    if (floor > predicted) {
        // The receiver's clock is ahead of the estimate (it runs fast or was
        // set forward): every bucket minimum so far is too low.
        if (floor - predicted > p.step_ns) {
            reseed(s, floor, now);
            out.events |= offset_step_forward;
        } else {
            s.base.store(floor, relaxed);
            s.base_at.store(now, relaxed);
            if (s.bucket_min.load(relaxed) < floor) {
                s.bucket_min.store(floor, relaxed);
                s.bucket_min_at.store(now, relaxed);
            }
            out.events |= offset_raised;
        }
        predicted = floor;
    }

    const time_ns above = bound - predicted;
    if (above < -p.step_ns) {
        // Far faster than anything before: the receiver's clock went back.
        reseed(s, bound, now);
        out.offset = bound;
        out.events |= offset_step_back;
        return out;
    }
    const time_ns floor_seen = s.floor_seen_at.load(relaxed);
    if (floor != no_offset_floor && (floor_seen == clock_offset_state::none || now - floor_seen > p.step_ns)) {
        s.floor_seen_at.store(now, relaxed);
    }
    if (above > p.step_ns &&
        (floor != no_offset_floor || (floor_seen != clock_offset_state::none && now - floor_seen <= p.window_ns))) {
        // The round trip bounds the offset from below, now or lately, and
        // that bound did not move (a clock set forward raises it: handled
        // above): this is a queue, however long (PFC back-pressure in an
        // in-cast holds hundreds of microseconds; resent packets' ACKs carry
        // no floor). Taking it for a step would hide it.
        end_run(s);
        out.offset = predicted;
        return out;
    }
    if (above > p.step_ns) {
        // No round trip to tell for a window: too slow for a queue if it
        // lasts, so step_samples such samples in a row are a clock set
        // forward.
        lower(s.run_min, bound);
        if (s.run.fetch_add(1, relaxed) + 1 >= p.step_samples) {
            const time_ns lowest = std::min(s.run_min.load(relaxed), bound);
            reseed(s, lowest, now);
            out.offset = lowest;
            out.events |= offset_step_forward;
            return out;
        }
        out.offset = predicted;
        return out;
    }
    end_run(s);
    if (above < 0) {
        // A new point of the lower envelope.
        s.base.store(bound, relaxed);
        s.base_at.store(now, relaxed);
        out.offset = bound;
        return out;
    }
    out.offset = predicted;
    return out;
}

} // namespace laps::tables
