#pragma once
// FlowBender (Kabbani et al., CoNEXT 2014), Hopper's baseline (seed 002, §1
// and §4): a flow counts the share of its ACKs that echo ECN over each round
// trip; after `rounds` consecutive rounds with more than `marked_fraction`
// marked it moves to a random other entropy (UDP source port), blind to that
// path's state; a retransmission timeout moves it at once. The paper's
// values: T = 5%, N = 1.
//
// Pure state, time passed in: the testbed's RoCE hosts
// (fabric/schemes/flowbender.cpp) and the engine (pipeline/policies.cpp) run it.

#include "common/rng.hpp"
#include "common/time.hpp"

#include <cstdint>

namespace laps::policy {

using common::time_ns;

struct flowbender_config {
    double marked_fraction = 0.05; // T
    std::uint32_t rounds = 1;      // N
    std::uint16_t entropies = 256;
};

class flowbender {
public:
    flowbender() noexcept = default;
    flowbender(const flowbender_config& c, std::uint16_t first_entropy) noexcept
        : _config(c), _current(first_entropy)
    {
    }

    std::uint16_t current() const noexcept { return _current; }
    std::uint64_t reroutes() const noexcept { return _reroutes; }

    // One ACK, its round trip `rtt` (a round lasts one RTT): true when the flow rerouted.
    bool on_ack(bool ecn_marked, time_ns rtt, time_ns now, common::rng& random) noexcept
    {
        if (_round_start < 0) {
            _round_start = now;
        }
        ++_acks;
        _marked += ecn_marked ? 1u : 0u;
        if (now - _round_start < rtt) {
            return false;
        }
        const bool congested = static_cast<double>(_marked) > _config.marked_fraction * _acks;
        _round_start = now;
        _acks = 0;
        _marked = 0;
        _congested_rounds = congested ? _congested_rounds + 1 : 0;
        if (_congested_rounds < _config.rounds || _config.entropies < 2) {
            return false;
        }
        _congested_rounds = 0;
        _current = static_cast<std::uint16_t>((_current + 1u + random.below(_config.entropies - 1u)) %
                                              _config.entropies);
        ++_reroutes;
        return true;
    }

    // A retransmission timeout: FlowBender reroutes at once (its paper's
    // second trigger, for failed paths).
    bool on_timeout(common::rng& random) noexcept
    {
        if (_config.entropies < 2) {
            return false;
        }
        _current = static_cast<std::uint16_t>((_current + 1u + random.below(_config.entropies - 1u)) %
                                              _config.entropies);
        _congested_rounds = 0;
        ++_reroutes;
        return true;
    }

private:
    flowbender_config _config;
    std::uint16_t _current = 0;
    time_ns _round_start = -1;
    std::uint32_t _acks = 0;
    std::uint32_t _marked = 0;
    std::uint32_t _congested_rounds = 0;
    std::uint64_t _reroutes = 0;
};

} // namespace laps::policy
