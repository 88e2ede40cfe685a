#pragma once
// Best-path search on the core graph, under the path order of path.hpp.
//
// The core graph is the fabric without its leaf hosts (a host with one link to
// a node that has more). A leaf can only be the first or last node of a loopless
// path, so every search runs between the leaves' attachment nodes: smaller
// graphs (a fat-tree k=32 has 1,280 core nodes for 9,472 nodes) and one result
// shared by all the hosts behind a switch. Core indices grow with node ids, so
// comparing indices compares node ids.
//
// The search is Dijkstra (A* when a target and its tree are given) on
// (weight, delay). When a node is settled, all its best predecessors are
// already settled; it takes as parent the one whose path avoids the
// highest-numbered node where the candidates differ (they share the path up to
// their lowest common ancestor, so only the two branches are compared).

#include "topology/model.hpp"
#include "topology/path.hpp"

#include <limits>
#include <span>
#include <vector>

namespace laps::topology {

inline constexpr std::uint32_t no_index = std::numeric_limits<std::uint32_t>::max();
inline constexpr path_cost unreachable_cost{std::numeric_limits<std::uint32_t>::max(),
                                            std::numeric_limits<std::int64_t>::max()};

struct core_edge {
    std::uint32_t peer = no_index; // core index
    link_id link = 0;
    path_cost cost; // weight and delay of the link
};

struct core_graph {
    std::vector<node_id> node_of; // core index -> node id, increasing
    std::vector<std::size_t> begin;
    std::vector<core_edge> edges;

    std::size_t size() const noexcept { return node_of.size(); }
    std::span<const core_edge> edges_of(std::uint32_t c) const noexcept
    {
        return {edges.data() + begin[c], edges.data() + begin[c + 1]};
    }
};

// Best paths from one root to every core node.
struct core_tree {
    std::vector<std::uint32_t> parent; // no_index at the root and unreachable nodes
    std::vector<path_cost> cost;       // unreachable_cost when unreachable
};

// Per-thread working memory, reused across searches without clearing: an
// entry is valid when its stamp equals the current generation.
struct search_scratch {
    struct entry {
        path_cost f; // cost so far + remaining estimate
        path_cost g; // cost so far
        std::uint32_t node;
    };

    std::uint32_t generation = 0;
    std::vector<std::uint32_t> seen;    // cost/parent valid
    std::vector<std::uint32_t> settled; // final
    std::vector<std::uint32_t> blocked; // may not be visited
    std::vector<path_cost> cost;
    std::vector<std::uint32_t> parent;
    std::vector<std::uint32_t> depth; // hops from the start, once settled
    std::vector<entry> heap;
    // Lowest weight estimate a search left out for being over its bound.
    std::uint64_t pruned_weight = 0;

    // Starts a new search over `n` nodes.
    void begin(std::size_t n);
};

core_tree shortest_tree(const core_graph& graph, std::uint32_t root, search_scratch& scratch);

// Restrictions of one search, as Yen's spur searches need.
struct search_limits {
    std::span<const std::uint32_t> blocked;         // nodes the path may not visit
    std::span<const std::uint32_t> forbidden_first; // nodes that may not follow `from`
    std::uint32_t max_weight = std::numeric_limits<std::uint32_t>::max();
};

// The best path from `from` to `to` (core indices, both included) within
// `limits`; `to_tree` is the unrestricted tree rooted at `to`, whose costs
// guide the search. False when there is none.
bool best_path(const core_graph& graph, const core_tree& to_tree, std::uint32_t from, std::uint32_t to,
               const search_limits& limits, search_scratch& scratch, std::vector<std::uint32_t>& out);

} // namespace laps::topology
