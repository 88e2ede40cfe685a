#pragma once
// Paths as node sequences, and the one order on them that every part of the
// library uses (shortest paths, Yen's k shortest, candidate order):
//
//   1. lower total link weight (model.hpp: 1 per link unless set, so by
//      default fewer hops);
//   2. then lower total propagation delay;
//   3. then the path whose node ids, sorted in decreasing order, are
//      lexicographically smaller: of two paths, the one that avoids the
//      highest-numbered node on which they differ;
//   4. then the same on link ids (only paths through the same nodes in a
//      different order get here).
//
// The order depends only on the sets of nodes and links, never on the
// direction, so the best path from b to a is the reverse of the best path from
// a to b (ACKs retrace data packets). Replacing a segment by a better one with
// the same ends gives a better path, so every sub-path of a best path is the
// best path between its ends: a switch forwarding toward an anchor hop by hop
// reproduces the source's expansion.

#include "topology/model.hpp"

#include <compare>
#include <span>
#include <string>
#include <vector>

namespace laps::topology {

struct path_cost {
    std::uint32_t weight = 0;  // hops when every link weighs 1
    std::int64_t delay_ns = 0; // propagation only: serialization depends on the packet

    path_cost operator+(const path_cost& o) const noexcept { return {weight + o.weight, delay_ns + o.delay_ns}; }
    auto operator<=>(const path_cost&) const = default;
};

struct path_key {
    path_cost cost;
    std::vector<node_id> nodes_desc;
    std::vector<link_id> links_desc;

    auto operator<=>(const path_key&) const = default;
};

// Throws path_error if two consecutive nodes are not linked.
path_key make_path_key(const fabric& f, std::span<const node_id> path);
path_cost cost_of(const fabric& f, std::span<const node_id> path);

bool is_loopless(std::span<const node_id> path);
std::vector<node_id> reversed(std::span<const node_id> path);

// "h0_0_0 > sw0_0 > sw1_2 > h1_2_3", for messages.
std::string describe_path(const fabric& f, std::span<const node_id> path);

} // namespace laps::topology
