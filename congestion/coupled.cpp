#include "congestion/coupled.hpp"

#include <algorithm>

namespace laps::congestion {

void coupled_rates::start(std::uint8_t paths, double bps) noexcept
{
    _paths = static_cast<std::uint8_t>(std::min<std::size_t>(paths, max_coupled_paths));
    const double each = _paths == 0 ? 0.0 : bps / _paths;
    _bps.fill(0.0);
    std::fill_n(_bps.begin(), _paths, each);
    _next_dec.fill(0);
    _next_inc.fill(0);
    _increasing_since = -1;
    _last_action.fill(0);
}

void coupled_rates::start(const aimd_params& p, std::uint8_t paths, double bps, const std::uint32_t* weights) noexcept
{
    start(paths, bps);
    double total = 0;
    for (std::uint8_t i = 0; i < _paths; ++i) {
        total += weights[i];
    }
    for (std::uint8_t i = 0; total > 0 && i < _paths; ++i) {
        _bps[i] = std::max(bps * weights[i] / total, p.floor_bps / _paths);
    }
}

double coupled_rates::sum() const noexcept
{
    double s = 0;
    for (std::uint8_t i = 0; i < _paths; ++i) {
        s += _bps[i];
    }
    return s;
}

aimd_action coupled_rates::on_ack(const aimd_params& p, std::uint8_t slot, time_ns now, time_ns real,
                                  time_ns queue) noexcept
{
    if (slot >= _paths || (now < _next_dec[slot] && now < _next_inc[slot])) {
        return aimd_action::none; // most ACKs: inside both of the path's windows
    }
    const fair_params& f = p.fair;
    // A path with a small share may see fewer ACKs than one per window:
    // its cut and its step count the time since its last action.
    const time_ns since = _last_action[slot] > 0 ? (now - _last_action[slot]) / 2 : 0;
    const time_ns t = fair_bounded_t(std::max(real, since), f); // for the amounts
    const time_ns window_t = fair_bounded_t(real, f);              // for the windows
    const double floor = p.floor_bps / _paths;
    const double flow = sum();
    double& rate = _bps[slot];
    if (queue > f.target_queue_ns) {
        if (now < _next_dec[slot] && (f.flow_scaling_ns <= 0 || now < _next_inc[slot])) {
            return aimd_action::none;
        }
        // The target scales with the flow's rate, not the path's: a path
        // with a small share of a fast flow is not a slow flow.
        if (const time_ns target = fair_target(p, flow); queue > target) {
            if (now < _next_dec[slot]) {
                return aimd_action::none;
            }
            rate = std::max(rate * fair_keep(f, queue, target, t), floor);
            _next_dec[slot] = window_end(now, window_t);
            _next_inc[slot] = _next_dec[slot];
            _increasing_since = -1;
            _last_action[slot] = now;
            return aimd_action::decrease;
        }
    }
    if (now < _next_inc[slot]) {
        return aimd_action::none;
    }
    if (_increasing_since < 0) {
        _increasing_since = now;
    }
    // Coupled: the path's share of one flow's step.
    // Hyper increase counts the time since any path of the flow was cut: a
    // flow whose paths are all quiet regains the line in a bounded time,
    // while one path that never happens to be cut does not double its step
    // and take the flow's traffic from the others.
    const fair_increase inc = fair_step(p, t, now, _increasing_since);
    const double share = flow > 0 ? rate / flow : 1.0;
    // No more than the line rate leaves room for: a flow at the cap (its
    // NIC the bottleneck) keeps its split, and only cuts move it.
    rate += std::min(inc.step_bps, std::max(0.0, p.cap_bps - flow)) * share;
    _next_inc[slot] = window_end(now, window_t);
    _last_action[slot] = now;
    return inc.hyper ? aimd_action::hyper_increase : aimd_action::increase;
}

void coupled_rates::on_timeout(const aimd_params& p, std::uint8_t slot) noexcept
{
    if (slot < _paths) {
        _bps[slot] = std::max(_bps[slot] * (1.0 - p.fair.max_decrease), p.floor_bps / _paths);
        _increasing_since = -1;
    }
}

double coupled_rates::total_bps(const aimd_params& p, std::uint32_t usable) const noexcept
{
    double s = 0;
    for (std::uint8_t i = 0; i < _paths; ++i) {
        if ((usable >> i) & 1u) {
            s += _bps[i];
        }
    }
    return std::clamp(s, p.floor_bps, p.cap_bps);
}

double coupled_rates::latency_factor(time_ns real, time_ns uncongested) noexcept
{
    // Per packet and path: the usual case without a divide.
    const double within = stale_factor * static_cast<double>(uncongested);
    if (static_cast<double>(real) <= within) {
        return 1.0;
    }
    const double ratio = within / static_cast<double>(real);
    return ratio * ratio;
}

int coupled_rates::draw(const std::array<double, max_coupled_paths>& factors, std::uint32_t random32) const noexcept
{
    std::array<double, max_coupled_paths> w{};
    double s = 0;
    for (std::uint8_t i = 0; i < _paths; ++i) {
        w[i] = _bps[i] * factors[i];
        s += w[i];
    }
    if (s <= 0) {
        return -1;
    }
    double pick = s * (static_cast<double>(random32) * 0x1p-32);
    int last = -1;
    for (std::uint8_t i = 0; i < _paths; ++i) {
        if (w[i] <= 0) {
            continue;
        }
        last = i;
        if (pick < w[i]) {
            return i;
        }
        pick -= w[i];
    }
    return last; // rounding left `pick` past the last sum
}

} // namespace laps::congestion
