#include "policy/hopper.hpp"

#include <algorithm>
#include <cmath>

namespace laps::policy {

namespace {

time_ns times(double factor, time_ns base) noexcept
{
    return static_cast<time_ns>(std::llround(factor * static_cast<double>(base)));
}

} // namespace

hopper::hopper(const hopper_config& c, std::uint16_t first_entropy)
    : _config(c), _current(first_entropy), _probed(std::max<std::uint16_t>(1, c.entropies))
{
    _config.entropies = std::max<std::uint16_t>(1, _config.entropies);
    _current = static_cast<std::uint16_t>(_current % _config.entropies);
}

hopper_decision hopper::on_rtt(std::uint16_t entropy, time_ns rtt, time_ns now, common::rng& random)
{
    if (entropy != _current) {
        return {};
    }
    _last_sample = rtt;
    if (_epoch_start < 0) {
        _epoch_start = now;
    }
    _epoch_sum += rtt;
    ++_epoch_samples;
    // A control epoch lasts one RTT (the current average, the base RTT at first).
    const time_ns epoch = std::max(_config.base_rtt_ns, _average);
    if (now - _epoch_start < epoch) {
        return {};
    }
    return end_epoch(now, random);
}

hopper_decision hopper::end_epoch(time_ns now, common::rng& random)
{
    const double mean = static_cast<double>(_epoch_sum) / _epoch_samples;
    const double g = _average == 0 ? 1.0 : _config.ewma_gain;
    _average = static_cast<time_ns>(std::llround(g * mean + (1.0 - g) * static_cast<double>(_average)));
    _epoch_start = now;
    _epoch_sum = 0;
    _epoch_samples = 0;

    hopper_decision d;
    const time_ns base = _config.base_rtt_ns;
    const time_ns ttl = times(_config.probe_ttl, base);
    if (_average > times(_config.congestion_threshold, base)) {
        // Path Selection: the best answered probe still within its ttl, if clearly better.
        std::int32_t best = -1;
        for (std::uint16_t e = 0; e < _config.entropies; ++e) {
            const auto& p = _probed[e];
            if (e == _current || !p.answered || now - p.at > ttl) {
                continue;
            }
            if (best < 0 || p.rtt < _probed[static_cast<std::size_t>(best)].rtt) {
                best = e;
            }
        }
        if (best >= 0) {
            const auto& p = _probed[static_cast<std::size_t>(best)];
            if (static_cast<double>(p.rtt) < _config.switch_margin * static_cast<double>(_average)) {
                d.switched = true;
                d.entropy = static_cast<std::uint16_t>(best);
                d.delay_ns = std::max<time_ns>(0, _last_sample - p.rtt);
                // The old path is known congested: do not probe it again within ttl.
                _probed[_current] = probed{now, _average, true};
                _current = d.entropy;
                _average = p.rtt;
                ++_switches;
                return d;
            }
        }
    }
    if (_average > times(_config.probe_threshold, base) && now >= _probing_until && _config.entropies > 1) {
        // Probe Initiation: two random entropies, not the current one, not probed within ttl.
        for (int attempt = 0; attempt < 16 && d.probes < 2; ++attempt) {
            const auto e = static_cast<std::uint16_t>(random.below(_config.entropies));
            const auto& p = _probed[e];
            if (e == _current || (p.at >= 0 && now - p.at <= ttl) || (d.probes == 1 && d.probe[0] == e)) {
                continue;
            }
            d.probe[d.probes++] = e;
        }
        for (std::uint8_t i = 0; i < d.probes; ++i) {
            _probed[d.probe[i]] = probed{now, 0, false};
        }
        _probes_sent += d.probes;
        _probing_until = now + _average; // one epoch before the next round of probes
    }
    return d;
}

void hopper::on_probe(std::uint16_t entropy, time_ns rtt, time_ns now)
{
    if (entropy >= _probed.size()) {
        return;
    }
    auto& p = _probed[entropy];
    if (p.at < 0 || p.answered) {
        return; // not asked, or answered already
    }
    (void)now;
    p.rtt = rtt;
    p.answered = true;
}

} // namespace laps::policy
