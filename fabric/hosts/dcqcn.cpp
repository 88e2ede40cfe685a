#include "fabric/hosts/dcqcn.hpp"

#include <algorithm>
#include <cmath>

namespace laps::fabric::hosts {

dcqcn_rp::dcqcn_rp(const dcqcn_params& p, double line_rate_bps) noexcept
    : _p(&p), _line(line_rate_bps), _rate(line_rate_bps), _target(line_rate_bps)
{
}

void dcqcn_rp::advance_alpha(time_ns now) noexcept
{
    if (!_started || now <= _origin) {
        return;
    }
    // Ticks at origin + k x interval, k >= 1, up to and including now.
    const auto due = static_cast<std::uint64_t>((now - _origin) / _p->alpha_interval_ns);
    if (due <= _alpha_ticks) {
        return;
    }
    const double keep = 1.0 - _p->g;
    // The first pending tick sees the CNP bit; the others see none.
    _alpha = _alpha_cnp ? keep * _alpha + _p->g : keep * _alpha;
    const std::uint64_t quiet = due - _alpha_ticks - 1;
    if (quiet > 0) {
        _alpha *= std::pow(keep, static_cast<double>(quiet));
    }
    _alpha_cnp = false;
    _alpha_ticks = due;
}

double dcqcn_rp::alpha(time_ns now) noexcept
{
    advance_alpha(now);
    return _alpha;
}

time_ns dcqcn_rp::on_cnp(time_ns now) noexcept
{
    ++_cnps;
    if (!_started) {
        _started = true;
        _origin = now;
        _alpha = 1.0;
        _alpha_ticks = 0;
        _alpha_cnp = false;
        _target = _rate = _p->rate_on_first_cnp * _rate;
    } else {
        advance_alpha(now);
        _alpha_cnp = true;
    }
    _decrease_cnp = true;
    if (_check_pending) {
        return no_time;
    }
    _check_pending = true;
    // Decrease checks run at origin + 1 ns + k x interval (after the alpha
    // tick of the same instant), k >= 1: the first one strictly after now.
    const time_ns phase = _origin + 1;
    const time_ns step = _p->decrease_interval_ns;
    const time_ns k = now < phase ? 1 : (now - phase) / step + 1;
    return phase + std::max<time_ns>(1, k) * step;
}

bool dcqcn_rp::on_decrease_check(time_ns now) noexcept
{
    _check_pending = false;
    if (!_decrease_cnp) {
        return false;
    }
    _decrease_cnp = false;
    advance_alpha(now);
    if (_p->clamp_target || _timer_stage != 0) {
        _target = _rate;
    }
    _rate = std::max(_p->min_rate_bps, _rate * (1.0 - _alpha / 2.0));
    _timer_stage = 0;
    _byte_stage = 0;
    _byte_count = 0;
    _rp_due = now + _p->rp_timer_ns;
    ++_decreases;
    return true;
}

void dcqcn_rp::increase() noexcept
{
    const std::uint32_t f = _p->fast_recovery_stages;
    // With the byte counter off, its stage follows the timer's (artefact).
    const std::uint32_t bytes = _p->byte_counter_bytes == 0 ? _timer_stage : _byte_stage;
    const std::uint32_t hi = std::max(_timer_stage, bytes);
    const std::uint32_t lo = std::min(_timer_stage, bytes);
    if (hi < f) {
        // fast recovery: halfway to the target
    } else if (lo > f) {
        _target = std::min(_line, _target + _p->rate_hai_bps);
    } else {
        _target = std::min(_line, _target + _p->rate_ai_bps);
    }
    _rate = std::min(_line, (_rate + _target) / 2.0);
    ++_increases;
}

void dcqcn_rp::on_rp_timer(time_ns now) noexcept
{
    increase();
    ++_timer_stage;
    // At line rate with the target there, further increases change nothing:
    // stop the timer until the next decrease restarts it.
    _rp_due = (_rate >= _line && _target >= _line) ? no_time : now + _p->rp_timer_ns;
}

void dcqcn_rp::on_bytes_sent(std::uint32_t bytes) noexcept
{
    if (_p == nullptr || _p->byte_counter_bytes == 0 || !_started || _rp_due == no_time) {
        return;
    }
    _byte_count += bytes;
    while (_byte_count >= _p->byte_counter_bytes) {
        _byte_count -= _p->byte_counter_bytes;
        increase();
        ++_byte_stage;
    }
}

dctcp_cc::ack_result dctcp_cc::on_ack(std::uint32_t ack_psn, std::uint32_t snd_nxt, bool ecn_echo) noexcept
{
    ack_result r;
    _ecn_count += ecn_echo ? 1 : 0;
    bool new_batch = false;
    if (ack_psn > _last_update) {
        new_batch = true;
        if (_last_update == 0) { // first round (the artefact's marker)
            _last_update = snd_nxt;
            _batch = snd_nxt + 1;
        } else {
            r.new_round = true;
            r.fraction = std::min(1.0, static_cast<double>(_ecn_count) / static_cast<double>(_batch));
            _alpha = (1.0 - _p->g) * _alpha + _p->g * r.fraction;
            _last_update = snd_nxt;
            _ecn_count = 0;
            _batch = snd_nxt > ack_psn ? snd_nxt - ack_psn + 1 : 1;
        }
    }
    if (_cwr && ack_psn > _high_seq) {
        _cwr = false;
    }
    if (ecn_echo && !_cwr) {
        _rate = std::max(_p->min_rate_bps, _rate * (1.0 - _alpha / 2.0));
        _cwr = true;
        _high_seq = snd_nxt;
        r.cut = true;
    }
    if (!_cwr && new_batch) {
        _rate = std::min(_line, _rate + _p->rate_ai_bps);
    }
    return r;
}

} // namespace laps::fabric::hosts
