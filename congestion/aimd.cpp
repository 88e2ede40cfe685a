#include "congestion/aimd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace laps::congestion {

time_ns fair_scaled_target(const aimd_params& p, double rate_bps) noexcept
{
    const fair_params& f = p.fair;
    // Swift: alpha / sqrt(rate) + beta, 0 at the cap, the whole range at the floor.
    const double low = 1.0 / std::sqrt(p.floor_bps);
    const double high = 1.0 / std::sqrt(p.cap_bps);
    const double share = (1.0 / std::sqrt(rate_bps) - high) / (low - high);
    return f.target_queue_ns + static_cast<time_ns>(std::clamp(share, 0.0, 1.0) * static_cast<double>(f.flow_scaling_ns));
}

double fair_keep(const fair_params& f, time_ns queue, time_ns target, time_ns t) noexcept
{
    // Every flow at the bottleneck sees the same queue, so every flow
    // cuts the same fraction per unit of time: a cut of `fraction` per
    // interval, applied as (1 - fraction)^(window / interval) once per window,
    // so that a flow with a short window (which cuts more often) loses
    // no more than one with a long window. The ratio between flows is
    // kept, and the equal additive increases close it (Chiu & Jain).
    const double excess = static_cast<double>(queue - target) / static_cast<double>(queue);
    const double fraction = std::min(f.decrease_gain * excess, f.max_decrease);
    return std::max(std::pow(1.0 - fraction, fair_intervals(f, t)), 1.0 - f.max_decrease);
}


void aimd::cut(const aimd_params& p, time_ns now, time_ns min_real_t, double keep) noexcept
{
    _exp_bps = _cur_bps;
    set_rate(std::max(_cur_bps * keep, p.floor_bps));
    _next_dec = window_end(now, min_real_t);
    _inc_stage = 0;
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
    const time_ns t = fair_bounded_t(min_real_t, f);
    if (queue > f.target_queue_ns) {
        // Most ACKs fall inside both windows and change nothing: the scaled
        // target (square roots) only once one may act.
        if (now < _next_dec && (f.flow_scaling_ns <= 0 || now < _next_inc)) {
            return aimd_action::none;
        }
        if (const time_ns target = fair_target(p, _cur_bps); queue > target) {
            if (now < _next_dec) {
                return aimd_action::none;
            }
            cut(p, now, t, fair_keep(f, queue, target, t));
            // The cut shows in the queue a round trip later: no increase before.
            _next_inc = _next_dec;
            _increasing_since = -1;
            return aimd_action::decrease;
        }
    }
    if (now < _next_inc) {
        return aimd_action::none;
    }
    if (_increasing_since < 0) {
        _increasing_since = now;
    }
    const fair_increase inc = fair_step(p, t, now, _increasing_since);
    _inc_stage = static_cast<std::uint32_t>(std::min<std::uint64_t>(inc.stages, p.increase_stages + 30));
    set_rate(std::min(_cur_bps + inc.step_bps, p.cap_bps));
    _exp_bps = std::max(_exp_bps, _cur_bps);
    _next_inc = window_end(now, t);
    return inc.hyper ? aimd_action::hyper_increase : aimd_action::increase;
}

} // namespace laps::congestion
