#pragma once
// The random streams of a scheme's choices, one per node (stream
// streams::lb): a switch's draws, or a host's when the scheme chooses at the
// host. A rail GPU is its own ToR: its host-side and switch-side draws share
// its stream.

#include "common/rng.hpp"
#include "fabric/flow_generator.hpp"
#include "topology/model.hpp"

#include <cstdint>
#include <vector>

namespace laps::fabric::schemes {

class node_random {
public:
    node_random(std::uint64_t seed, std::size_t nodes)
    {
        _rng.reserve(nodes);
        for (topology::node_id v = 0; v < nodes; ++v) {
            _rng.emplace_back(stream_seed(seed, streams::lb, v));
        }
    }

    common::rng& operator[](topology::node_id v) noexcept { return _rng[v]; }

private:
    std::vector<common::rng> _rng;
};

} // namespace laps::fabric::schemes
