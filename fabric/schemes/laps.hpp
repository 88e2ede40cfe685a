#pragma once
// laps: the LAPS engine on every host (fabric/hosts/laps_hosts.hpp) chooses
// every packet's path itself, by selection.policy: Eq. 1's softmax of
// measured one-way latency (the paper), or the other seeds' policies run on
// the engine (spray, ecmp, fastest, reps, hopper, flowbender, selective;
// pipeline/policies.cpp). The switches follow its anchors: nothing for a
// scheme to do.

#include "fabric/schemes/scheme.hpp"

#include <memory>

namespace laps::fabric::schemes {

std::unique_ptr<scheme> make_laps(simulation& sim);

} // namespace laps::fabric::schemes
