#include "congestion/aimd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace laps::congestion {

namespace {

// now + 2t without overflow (t can be huge when every path timed out).
time_ns window_end(time_ns now, time_ns t) noexcept
{
    const time_ns max = std::numeric_limits<time_ns>::max();
    if (t > (max - now) / 2) {
        return max;
    }
    return now + 2 * t;
}

// The fair variant's t, bounded: a flow that measured milliseconds (PFC
// back-pressure, paths that timed out) would otherwise wait 2t after a cut
// before it may increase again, longer than a collective lasts, and jump to
// the cap in one step when it does (issue 20: a starved flow).
time_ns bounded_t(time_ns t, const fair_params& f) noexcept
{
    return std::min<time_ns>(t, 100 * f.interval_ns);
}

} // namespace

void aimd::cut(const aimd_params& p, time_ns now, time_ns min_real_t, double keep) noexcept
{
    _exp_bps = _cur_bps;
    set_rate(std::max(_cur_bps * keep, p.floor_bps));
    _next_dec = window_end(now, min_real_t);
    _inc_stage = 0;
}

const char* to_string(cc_variant v) noexcept
{
    return v == cc_variant::fair ? "fair" : "paper";
}

aimd_action aimd::on_ack(const aimd_params& p, time_ns now, time_ns max_base_T, time_ns min_real_t) noexcept
{
    if (min_real_t > max_base_T) {
        if (now < _next_dec) {
            return aimd_action::none;
        }
        cut(p, now, min_real_t, 0.5);
        return aimd_action::decrease;
    }
    if (now < _next_inc) {
        return aimd_action::none;
    }
    auto action = aimd_action::increase;
    ++_inc_stage;
    if (_inc_stage > p.increase_stages) {
        _exp_bps = std::min(_exp_bps * 2.0, p.cap_bps);
        action = aimd_action::hyper_increase;
        // Keep the counter from wrapping over months of uncongested running.
        _inc_stage = p.increase_stages + 1;
    }
    set_rate(std::min(std::max((_exp_bps + _cur_bps) * 0.5, _cur_bps + p.min_increase_bps), p.cap_bps));
    // The artefact keeps expRate >= curRate after its minimum step.
    _exp_bps = std::max(_exp_bps, _cur_bps);
    _next_inc = window_end(now, p.increase_window_T ? max_base_T : min_real_t);
    return action;
}

aimd_action aimd::on_ack_fair(const aimd_params& p, time_ns now, time_ns min_real_t, time_ns queue) noexcept
{
    const fair_params& f = p.fair;
    // Most ACKs fall inside a window and change nothing: the window's length
    // in intervals (a floating divide) only once one may act.
    const time_ns t = bounded_t(min_real_t, f);
    const auto intervals_in_window = [&] { return 2.0 * static_cast<double>(t) / static_cast<double>(f.interval_ns); };
    time_ns target = f.target_queue_ns;
    if (f.flow_scaling_ns > 0 && queue > target) {
        if (now < _next_dec && now < _next_inc) {
            return aimd_action::none; // neither a cut nor an increase may act: the target does not matter
        }
        // Swift: alpha / sqrt(rate) + beta, 0 at the cap, the whole range at the floor.
        const double low = 1.0 / std::sqrt(p.floor_bps);
        const double high = 1.0 / std::sqrt(p.cap_bps);
        const double share = (1.0 / std::sqrt(_cur_bps) - high) / (low - high);
        target += static_cast<time_ns>(std::clamp(share, 0.0, 1.0) * static_cast<double>(f.flow_scaling_ns));
    }
    if (queue > target) {
        if (now < _next_dec) {
            return aimd_action::none;
        }
        // Every flow at the bottleneck sees the same queue, so every flow
        // cuts the same fraction per unit of time: a cut of `fraction` per
        // interval, applied as (1 - fraction)^(window / interval) once per window,
        // so that a flow with a short window (which cuts more often) loses
        // no more than one with a long window. The ratio between flows is
        // kept, and the equal additive increases below close it (Chiu & Jain).
        const double excess = static_cast<double>(queue - target) / static_cast<double>(queue);
        const double fraction = std::min(f.decrease_gain * excess, f.max_decrease);
        const double keep = std::max(std::pow(1.0 - fraction, intervals_in_window()), 1.0 - f.max_decrease);
        cut(p, now, t, keep);
        // The cut shows in the queue a round trip later: no increase before.
        _next_inc = _next_dec;
        _increasing_since = -1;
        return aimd_action::decrease;
    }
    if (now < _next_inc) {
        return aimd_action::none;
    }
    auto action = aimd_action::increase;
    // The step is per unit of time, not per window: a flow whose window (2t)
    // is three times longer adds three times as much per increase, so rates
    // grow alike whatever the paths' lengths. Hyper increase is counted in
    // time too: after N intervals of increases without a cut the step
    // doubles with each further interval, so a flow at its floor regains an
    // idle line within about (N + log2(cap / step) + 1) intervals; counted in
    // increases, a flow with a short window would reach it first and take
    // the bottleneck.
    if (_increasing_since < 0) {
        _increasing_since = now;
    }
    double step = f.increase_bps * intervals_in_window();
    const auto stages = static_cast<std::uint64_t>((now - _increasing_since) / f.interval_ns) + 1;
    if (stages > p.increase_stages) {
        const auto doublings = static_cast<std::uint32_t>(std::min<std::uint64_t>(stages - p.increase_stages, 30));
        step *= static_cast<double>(1u << doublings);
        action = aimd_action::hyper_increase;
    }
    _inc_stage = static_cast<std::uint32_t>(std::min<std::uint64_t>(stages, p.increase_stages + 30));
    set_rate(std::min(_cur_bps + step, p.cap_bps));
    _exp_bps = std::max(_exp_bps, _cur_bps);
    _next_inc = window_end(now, t);
    return action;
}

} // namespace laps::congestion
