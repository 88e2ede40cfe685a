#pragma once
// Shortest paths of a fabric under the path order of path.hpp, and what the
// data path needs from them: expanding anchors into hops, next hops for
// source-routed and for plain (ECMP) packets.
//
// Best-path trees are computed on first use, one per root of the core graph
// (search.hpp), and kept: a routing object is safe to share between threads.
// The fabric must outlive it.

#include "topology/model.hpp"
#include "topology/path.hpp"
#include "topology/search.hpp"

#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace laps::topology {

class routing {
public:
    explicit routing(const fabric& f);
    ~routing();
    routing(const routing&) = delete;
    routing& operator=(const routing&) = delete;

    const fabric& topology() const noexcept { return _fabric; }

    // The best path from `from` to `to`, both included. shortest_path(b, a) is
    // the reverse of shortest_path(a, b).
    std::vector<node_id> shortest_path(node_id from, node_id to) const;
    path_cost distance(node_id from, node_id to) const;

    // First hop of shortest_path(at, toward); no_node when at == toward.
    node_id next_hop(node_id at, node_id toward) const;

    // Every neighbour of `at` on some path of minimal (weight, delay) toward
    // `toward`, by node id: the ECMP group of a plain packet.
    std::vector<node_id> ecmp_next_hops(node_id at, node_id toward) const;

    // The node sequence of a source-routed packet: best paths from `src` to the
    // first anchor, between anchors, and from the last anchor to `dst`.
    std::vector<node_id> expand(node_id src, std::span<const node_id> anchors, node_id dst) const;

    // True when `path` is exactly shortest_path(path.front(), path.back()).
    bool is_shortest(std::span<const node_id> path) const;

    // The core graph (search.hpp) and its trees, for the path finders.
    const core_graph& core() const noexcept { return _core; }
    bool is_leaf(node_id n) const noexcept { return _core_index[n] == no_index; }
    // The core node a node reaches the fabric through: itself, or a leaf's peer.
    std::uint32_t attachment(node_id n) const noexcept { return _attachment[n]; }
    std::uint32_t core_index(node_id n) const noexcept { return _core_index[n]; }
    // The link from a leaf to its attachment.
    link_id access_link(node_id leaf) const noexcept { return _access_link[leaf]; }
    path_cost link_cost(link_id l) const;
    const core_tree& tree(std::uint32_t root) const;

private:
    void check(node_id n) const;
    void append_core_path(std::uint32_t from, std::uint32_t to, std::vector<node_id>& out) const;

    const fabric& _fabric;
    core_graph _core;
    std::vector<std::uint32_t> _core_index; // no_index for leaves
    std::vector<std::uint32_t> _attachment;
    std::vector<link_id> _access_link;
    mutable std::unique_ptr<std::once_flag[]> _tree_once;
    mutable std::vector<std::unique_ptr<const core_tree>> _trees;
};

} // namespace laps::topology
