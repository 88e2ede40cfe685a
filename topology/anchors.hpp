#pragma once
// Anchors (paper §III-B): the waypoints a source-routed packet carries so that
// best paths (routing.hpp) between source, anchors and destination retrace its
// path exactly.

#include "topology/routing.hpp"

#include <span>
#include <vector>

namespace laps::topology {

// The fewest waypoints (node ids, source and destination excluded) with
// routing::expand(path.front(), anchors, path.back()) == path. Greedy: from
// each waypoint, go as far along the path as it is still the best path. That
// is optimal because every sub-path of a best path is a best path (path.hpp).
// May return more than tables::max_anchors; the caller decides. Throws
// path_error when the path uses a link that is not the best path between its
// own ends (possible only with link weights).
std::vector<node_id> compute_anchors(const routing& r, std::span<const node_id> path);

// The anchors of the reversed path: the same waypoints in reverse order (the
// path order is symmetric), as the receiver puts them on ACKs.
std::vector<node_id> reverse_anchors(std::span<const node_id> anchors);

} // namespace laps::topology
