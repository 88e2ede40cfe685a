#pragma once
// reps: REPS (seed 001, Algorithm 1; policy/reps.hpp) at the sending host:
// each DATA packet's entropy is one an unmarked ACK brought back (recycled),
// or, while the first BDP explores or none is cached, a new one; a
// retransmission timeout freezes exploration (a failure may be behind it).
// Parameters `roce.reps`: entropies, cache_size, freeze_us.

#include "fabric/schemes/scheme.hpp"
#include "policy/reps.hpp"

#include <any>
#include <array>
#include <memory>
#include <string_view>

namespace laps::fabric::schemes {

struct reps_params {
    // The authors' code: 256 entropies, a cache of 8; a timeout freezes for 1 ms.
    // explore_packets is set per run (the first BDP of packets, roce.irn_bdp_bytes).
    policy::reps_config config{.freeze_ns = common::ns_per_ms};
};

inline constexpr std::array<std::string_view, 3> reps_counters{
    "reps_recycled", // DATA sent on an entropy an unmarked ACK returned
    "reps_explored", // DATA sent on a new entropy
    "reps_freezes",  // timeouts that froze exploration
};

std::unique_ptr<scheme> make_reps(simulation& sim);
std::any parse_reps_params(const config::reader& r, const YAML::Node& n);

} // namespace laps::fabric::schemes
