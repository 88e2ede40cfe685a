#include "congestion/aimd.hpp"

#include <algorithm>
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

} // namespace

aimd_action aimd::on_ack(const aimd_params& p, time_ns now, time_ns max_base_T, time_ns min_real_t) noexcept
{
    if (min_real_t > max_base_T) {
        if (now < _next_dec) {
            return aimd_action::none;
        }
        _exp_bps = _cur_bps;
        set_rate(std::max(_cur_bps * 0.5, p.floor_bps));
        _next_dec = window_end(now, min_real_t);
        _inc_stage = 0;
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

} // namespace laps::congestion
