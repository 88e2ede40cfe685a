#pragma once
// Yen's k shortest loopless paths, in the path order of path.hpp, with
// Lawler's refinement (a path only spurs from where it left its parent).

#include "topology/routing.hpp"
#include "topology/search.hpp"

#include <vector>

namespace laps::topology {

// Up to `k` loopless paths from `from` to `to` (node ids, both included), best
// first, none heavier than `max_weight` (hops when links weigh 1). Searches
// run between the endpoints' attachments (search.hpp), so hosts behind the
// same switches share the work.
std::vector<std::vector<node_id>> k_shortest_paths(const routing& r, node_id from, node_id to, std::uint32_t k,
                                                   std::uint32_t max_weight);

// The same between two core nodes (core indices in and out), reusing `scratch`.
std::vector<std::vector<std::uint32_t>> k_shortest_core_paths(const routing& r, std::uint32_t from, std::uint32_t to,
                                                              std::uint32_t k, std::uint32_t max_weight,
                                                              search_scratch& scratch);

} // namespace laps::topology
