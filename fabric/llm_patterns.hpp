#pragma once
// The LLM-training communication patterns of the paper (Table II): every
// participant sends `message_bytes` to
//   All2all    : every other participant       (sv[i] -> sv[j])
//   AllReduce  : the root (gradient in-cast)    (sv[i] -> sv[1])
//   AllScatter : the root sends to every other (sv[1] -> sv[j])
// and the fat-tree benchmark (htsim's, Al-Fares et al.'s "random"):
//   Permutation: each participant to one other, each receiving from one:
//                a random derangement drawn from `seed`

#include "fabric/scenario.hpp"

#include <vector>

namespace laps::fabric {

// Flows of one llm item, sizes and start time already scaled; `hosts` is the
// number of hosts in the fabric (participants when the item lists none).
std::vector<flow_spec> llm_flows(const llm_traffic& item, std::size_t hosts, double scale, std::uint32_t tag,
                                 std::uint64_t seed);

} // namespace laps::fabric
