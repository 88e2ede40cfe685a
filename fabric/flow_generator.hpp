#pragma once
// Flows from a scenario's traffic items, all generated before the run (so
// the total is known for progress and nothing random happens mid-run):
//   poisson : per sender, Poisson arrivals at `load` x its host rate / mean
//             flow size; sizes from the workload CDF; the receiver uniform
//             among all other hosts, or among the sender's listed pairs;
//   llm     : llm_patterns.hpp;
//   flows   : as listed.
// One seed drives it; each (item, sender) has its own stream, so adding a
// traffic item does not change the flows of the others.

#include "fabric/scenario.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace laps::fabric {

// `host_rate_bps[h]`: the rate loads are relative to. The result is sorted by
// start time, ties in generation order.
// `load`, when set, replaces the load of every poisson item.
std::vector<flow_spec> generate_flows(const scenario& s, double scale, std::uint64_t seed,
                                      const std::vector<double>& host_rate_bps, std::optional<double> load = {});

// Derives independent 64-bit seeds: stream(seed, a, b) for generator a, index b.
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) noexcept;

// Stream namespaces for stream_seed.
namespace streams {
inline constexpr std::uint64_t poisson = 1;
inline constexpr std::uint64_t clocks = 2;
inline constexpr std::uint64_t link_loss = 3;
inline constexpr std::uint64_t engine = 4;
inline constexpr std::uint64_t ecmp = 5;
inline constexpr std::uint64_t lb = 6;          // the schemes' random choices, per node
inline constexpr std::uint64_t red = 7;         // RED marking, per port
inline constexpr std::uint64_t llm_starts = 8;  // LLM items' Poisson start times
inline constexpr std::uint64_t permutation = 9; // the permutation pattern's pairing
} // namespace streams

} // namespace laps::fabric
