#pragma once
// Hopper (seed 002, §3): host-based single-path load balancing for RDMA. A
// flow keeps one path (one entropy: a UDP source port ECMP hashes, or a
// source-routed path slot) and watches the moving average of its delay over
// control epochs of one RTT:
//   - above th_prob x base it probes two random alternative entropies not
//     probed within ttl_prob (power of two choices, "Probe Initiation");
//   - above th_cong x base it moves to the best alternative probed within
//     ttl, but only when that one is clearly better: below `switch_margin` x
//     the current average ("Path Selection");
//   - the first packet on the new path waits the delay difference, so packets
//     of the new path do not overtake those still on the old one ("Reducing
//     Out-of-Order Packets").
// Simplified against the paper: the wait is the difference between the old
// path's last sample and the probe's (the paper extrapolates the old path's
// RTT by a linear regression over the epoch's samples); the epoch's average
// is the mean of its samples mixed into the previous average with
// `ewma_gain` (Table 1 lists 1: the last epoch alone).
//
// The delay is whatever the caller measures, consistently: the testbed's
// RoCE hosts a round trip (ACK arrival minus the echoed send time), the LAPS
// engine the one-way latency its ACKs carry. Where the probes' answers live
// is the caller's too (a `Store`): the testbed keeps a table per flow, the
// engine reads its PIT, where LAPS's probes already land. A Store provides
//   bool usable(e) const                      the entropy may carry traffic
//   bool answered(e, now, ttl, delay&) const  a probe answer within ttl (its delay)
//   bool probed(e, now, ttl) const            probed (or measured) within ttl
//   void probe_sent(e, now)                   a probe leaves on e now
// Pure state, time passed in; the state is small enough to live in a flow.

#include "common/rng.hpp"
#include "common/time.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace laps::policy {

using common::time_ns;

struct hopper_config {
    time_ns base_ns = 0;               // the uncongested delay (base RTT, or base one-way latency)
    double probe_threshold = 1.5;      // th_prob, x base (Table 1)
    double congestion_threshold = 2.5; // th_cong, x base (Table 1)
    double probe_ttl = 4.0;            // ttl_prob, x base (Table 1)
    double ewma_gain = 1.0;            // weight of the last epoch's mean
    double switch_margin = 0.8;        // switch only to a path with delay < margin x current
    std::uint16_t entropies = 256;     // entropies to choose from
};

// What the sender does after a sample.
struct hopper_decision {
    std::uint8_t probes = 0;              // probes to send now, on these entropies
    std::array<std::uint16_t, 2> probe{};
    bool switched = false;                // data moves to `entropy` after `delay_ns`
    std::uint16_t entropy = 0;
    time_ns delay_ns = 0;
};

struct hopper_state {
    std::uint16_t current = 0;
    std::uint16_t epoch_samples = 0;
    std::uint32_t switches = 0;
    time_ns average = 0;
    time_ns last_sample = 0;
    time_ns epoch_start = -1;
    time_ns epoch_sum = 0;
    time_ns probing_until = 0; // probes in flight: no new round before this
};

// The base delay Hopper compares a flow's delay with: its fastest path's
// uncongested delay, `legs` times over (1: one-way, what LAPS ACKs carry; 2:
// a round trip, what the testbed's RoCE hosts time); at least 1 ns, which a
// flow without paths gets. `delay_of(path)` is a path's uncongested one-way
// delay; 0 counts as unknown until a path has one.
template <class Paths, class DelayOf>
time_ns hopper_base_ns(const Paths& paths, DelayOf delay_of, time_ns legs = 1) noexcept
{
    time_ns fastest = 0;
    for (const auto& path : paths) {
        const time_ns d = delay_of(path);
        fastest = fastest == 0 ? d : std::min(fastest, d);
    }
    return std::max<time_ns>(1, legs * fastest);
}

namespace detail {

inline time_ns times(double factor, time_ns base) noexcept
{
    return static_cast<time_ns>(std::llround(factor * static_cast<double>(base)));
}

} // namespace detail

// One delay sample of a packet sent on `entropy` (samples of an old path
// after a switch are ignored).
template <class Store>
hopper_decision hopper_on_sample(const hopper_config& c, hopper_state& s, Store& store, std::uint16_t entropy,
                                 time_ns sample, time_ns now, common::rng& random) noexcept
{
    if (entropy != s.current || c.entropies == 0) {
        return {};
    }
    s.last_sample = sample;
    if (s.epoch_start < 0) {
        s.epoch_start = now;
    }
    s.epoch_sum += sample;
    ++s.epoch_samples;
    // A control epoch lasts one RTT (the current average, the base at first).
    if (now - s.epoch_start < std::max(c.base_ns, s.average) && s.epoch_samples < 0xffff) {
        return {};
    }
    const double mean = static_cast<double>(s.epoch_sum) / s.epoch_samples;
    const double g = s.average == 0 ? 1.0 : c.ewma_gain;
    s.average = static_cast<time_ns>(std::llround(g * mean + (1.0 - g) * static_cast<double>(s.average)));
    s.epoch_start = now;
    s.epoch_sum = 0;
    s.epoch_samples = 0;

    hopper_decision d;
    const time_ns ttl = detail::times(c.probe_ttl, c.base_ns);
    if (s.average > detail::times(c.congestion_threshold, c.base_ns)) {
        // Path Selection: the best answered probe within its ttl, if clearly better.
        bool found = false;
        std::uint16_t best = 0;
        time_ns best_delay = 0;
        for (std::uint16_t e = 0; e < c.entropies; ++e) {
            time_ns delay = 0;
            if (e != s.current && store.usable(e) && store.answered(e, now, ttl, delay) &&
                (!found || delay < best_delay)) {
                found = true;
                best = e;
                best_delay = delay;
            }
        }
        if (found && static_cast<double>(best_delay) < c.switch_margin * static_cast<double>(s.average)) {
            d.switched = true;
            d.entropy = best;
            d.delay_ns = std::max<time_ns>(0, s.last_sample - best_delay);
            s.current = best;
            s.average = best_delay;
            ++s.switches;
            return d;
        }
    }
    if (s.average > detail::times(c.probe_threshold, c.base_ns) && now >= s.probing_until && c.entropies > 1) {
        // Probe Initiation: two random entropies, not the current one, not probed within ttl.
        for (int attempt = 0; attempt < 16 && d.probes < 2; ++attempt) {
            const auto e = static_cast<std::uint16_t>(random.below(c.entropies));
            if (e == s.current || !store.usable(e) || store.probed(e, now, ttl) || (d.probes == 1 && d.probe[0] == e)) {
                continue;
            }
            d.probe[d.probes++] = e;
        }
        for (std::uint8_t i = 0; i < d.probes; ++i) {
            store.probe_sent(d.probe[i], now);
        }
        s.probing_until = now + s.average; // one epoch before the next round of probes
    }
    return d;
}

// A timeout on the current path: no sample will come, so the rule above
// cannot fire. Hopper (§3) has no rule for a failed path; here a timeout
// counts as a delay above th_cong with no limit: the flow moves to the best
// alternative probed within ttl, else to a random usable one (FlowBender
// likewise reroutes on a retransmission timeout).
template <class Store>
hopper_decision hopper_on_timeout(const hopper_config& c, hopper_state& s, Store& store, time_ns now,
                                  common::rng& random) noexcept
{
    hopper_decision d;
    if (c.entropies < 2) {
        return d;
    }
    const time_ns ttl = detail::times(c.probe_ttl, c.base_ns);
    bool found = false;
    time_ns best_delay = 0;
    for (std::uint16_t e = 0; e < c.entropies; ++e) {
        time_ns delay = 0;
        if (e != s.current && store.usable(e) && store.answered(e, now, ttl, delay) && (!found || delay < best_delay)) {
            found = true;
            d.entropy = e;
            best_delay = delay;
        }
    }
    if (!found) {
        for (int attempt = 0; attempt < 16 && !found; ++attempt) {
            const auto e = static_cast<std::uint16_t>(random.below(c.entropies));
            if (e != s.current && store.usable(e)) {
                found = true;
                d.entropy = e;
            }
        }
    }
    if (!found) {
        return d;
    }
    d.switched = true;
    s.current = d.entropy;
    s.average = best_delay; // 0 when unknown: the next epoch measures it
    s.epoch_start = -1;
    s.epoch_sum = 0;
    s.epoch_samples = 0;
    ++s.switches;
    return d;
}

// The testbed's probe store: what each entropy's last probe said.
class hopper_probe_table {
public:
    explicit hopper_probe_table(std::uint16_t entropies) : _probed(std::max<std::uint16_t>(1, entropies)) {}

    bool usable(std::uint16_t) const noexcept { return true; }
    bool answered(std::uint16_t e, time_ns now, time_ns ttl, time_ns& delay) const noexcept
    {
        const auto& p = _probed[e];
        if (!p.answered || now - p.at > ttl) {
            return false;
        }
        delay = p.delay;
        return true;
    }
    bool probed(std::uint16_t e, time_ns now, time_ns ttl) const noexcept
    {
        const auto& p = _probed[e];
        return p.at >= 0 && now - p.at <= ttl;
    }
    void probe_sent(std::uint16_t e, time_ns now) noexcept { _probed[e] = entry{now, 0, false}; }
    // A probe's answer; ignored when no probe is outstanding on `e`.
    void on_answer(std::uint16_t e, time_ns delay) noexcept
    {
        if (e >= _probed.size() || _probed[e].at < 0 || _probed[e].answered) {
            return;
        }
        _probed[e].delay = delay;
        _probed[e].answered = true;
    }
    // The path a flow left is known congested: counted as probed now.
    void left(std::uint16_t e, time_ns now, time_ns delay) noexcept { _probed[e] = entry{now, delay, true}; }

private:
    struct entry {
        time_ns at = -1; // when the probe was sent; -1: never
        time_ns delay = 0;
        bool answered = false;
    };
    std::vector<entry> _probed;
};

// Hopper with its own probe table: the testbed's per-flow object.
class hopper {
public:
    hopper(const hopper_config& c, std::uint16_t first_entropy) : _config(c), _probes(c.entropies)
    {
        _config.entropies = std::max<std::uint16_t>(1, _config.entropies);
        _state.current = static_cast<std::uint16_t>(first_entropy % _config.entropies);
    }

    std::uint16_t current() const noexcept { return _state.current; }
    time_ns average_rtt() const noexcept { return _state.average; }
    std::uint64_t switches() const noexcept { return _state.switches; }

    hopper_decision on_rtt(std::uint16_t entropy, time_ns rtt, time_ns now, common::rng& random)
    {
        const std::uint16_t before = _state.current;
        const time_ns average = _state.average;
        const auto d = hopper_on_sample(_config, _state, _probes, entropy, rtt, now, random);
        if (d.switched) {
            _probes.left(before, now, average); // not probed again within ttl
        }
        return d;
    }
    void on_probe(std::uint16_t entropy, time_ns rtt, time_ns) { _probes.on_answer(entropy, rtt); }
    hopper_decision on_timeout(time_ns now, common::rng& random)
    {
        const std::uint16_t before = _state.current;
        const auto d = hopper_on_timeout(_config, _state, _probes, now, random);
        if (d.switched) {
            _probes.left(before, now, std::numeric_limits<time_ns>::max() / 4);
        }
        return d;
    }

private:
    hopper_config _config;
    hopper_state _state;
    hopper_probe_table _probes;
};

} // namespace laps::policy
