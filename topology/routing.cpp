#include "topology/routing.hpp"

#include <algorithm>
#include <string>

namespace laps::topology {

routing::routing(const fabric& f)
    : _fabric(f), _core_index(f.node_count(), no_index), _attachment(f.node_count(), no_index),
      _access_link(f.node_count(), 0)
{
    // A leaf is a host with one link to a node that has more than one: it can
    // only start or end a loopless path.
    const auto n = static_cast<node_id>(f.node_count());
    for (node_id i = 0; i < n; ++i) {
        const auto adj = f.neighbours(i);
        const bool leaf = f.is_host(i) && adj.size() == 1 && f.neighbours(adj[0].peer).size() > 1;
        if (!leaf) {
            _core_index[i] = static_cast<std::uint32_t>(_core.node_of.size());
            _core.node_of.push_back(i);
        }
    }
    _core.begin.assign(_core.node_of.size() + 1, 0);
    for (std::uint32_t c = 0; c < _core.node_of.size(); ++c) {
        for (const auto& a : f.neighbours(_core.node_of[c])) {
            if (_core_index[a.peer] != no_index) {
                const auto& l = f.link_at(a.link);
                _core.edges.push_back(core_edge{_core_index[a.peer], a.link, path_cost{l.weight, l.delay_ns}});
            }
        }
        _core.begin[c + 1] = _core.edges.size();
    }
    for (node_id i = 0; i < n; ++i) {
        if (_core_index[i] != no_index) {
            _attachment[i] = _core_index[i];
        } else {
            const auto& a = f.neighbours(i)[0];
            _attachment[i] = _core_index[a.peer];
            _access_link[i] = a.link;
        }
    }
    _tree_once = std::make_unique<std::once_flag[]>(_core.size());
    _trees.resize(_core.size());
}

routing::~routing() = default;

path_cost routing::link_cost(link_id l) const
{
    const auto& x = _fabric.link_at(l);
    return path_cost{x.weight, x.delay_ns};
}

const core_tree& routing::tree(std::uint32_t root) const
{
    std::call_once(_tree_once[root], [&] {
        search_scratch scratch;
        _trees[root] = std::make_unique<const core_tree>(shortest_tree(_core, root, scratch));
    });
    return *_trees[root];
}

void routing::check(node_id n) const
{
    if (n >= _fabric.node_count()) {
        throw path_error("node id " + std::to_string(n) + " is not in the fabric (" +
                         std::to_string(_fabric.node_count()) + " nodes)");
    }
}

void routing::append_core_path(std::uint32_t from, std::uint32_t to, std::vector<node_id>& out) const
{
    // The tree rooted at `to` holds the best paths toward it; by symmetry they
    // are the best paths from it, reversed.
    const auto& t = tree(to);
    for (std::uint32_t c = from; c != no_index; c = t.parent[c]) {
        out.push_back(_core.node_of[c]);
    }
}

std::vector<node_id> routing::shortest_path(node_id from, node_id to) const
{
    check(from);
    check(to);
    if (from == to) {
        return {from};
    }
    std::vector<node_id> out;
    if (is_leaf(from)) {
        out.push_back(from);
    }
    append_core_path(_attachment[from], _attachment[to], out);
    if (is_leaf(to)) {
        out.push_back(to);
    }
    return out;
}

path_cost routing::distance(node_id from, node_id to) const
{
    check(from);
    check(to);
    if (from == to) {
        return {};
    }
    path_cost c = tree(_attachment[to]).cost[_attachment[from]];
    for (const node_id end : {from, to}) {
        if (is_leaf(end)) {
            c = c + link_cost(_access_link[end]);
        }
    }
    return c;
}

node_id routing::next_hop(node_id at, node_id toward) const
{
    check(at);
    check(toward);
    if (at == toward) {
        return no_node;
    }
    if (is_leaf(at)) {
        return _core.node_of[_attachment[at]];
    }
    const std::uint32_t here = _core_index[at];
    if (here == _attachment[toward]) {
        return toward; // `toward` is a leaf behind `at`
    }
    return _core.node_of[tree(_attachment[toward]).parent[here]];
}

std::vector<node_id> routing::ecmp_next_hops(node_id at, node_id toward) const
{
    check(at);
    check(toward);
    std::vector<node_id> out;
    if (at == toward) {
        return out;
    }
    const path_cost total = distance(at, toward);
    for (const auto& a : _fabric.neighbours(at)) {
        if (is_leaf(a.peer) && a.peer != toward) {
            continue;
        }
        if (link_cost(a.link) + distance(a.peer, toward) == total) {
            out.push_back(a.peer);
        }
    }
    return out;
}

std::vector<node_id> routing::expand(node_id src, std::span<const node_id> anchors, node_id dst) const
{
    std::vector<node_id> out{src};
    node_id at = src;
    auto walk = [&](node_id next) {
        if (next == at) {
            return;
        }
        const auto segment = shortest_path(at, next);
        out.insert(out.end(), segment.begin() + 1, segment.end());
        at = next;
    };
    check(src);
    for (const node_id a : anchors) {
        check(a);
        walk(a);
    }
    check(dst);
    walk(dst);
    return out;
}

bool routing::is_shortest(std::span<const node_id> path) const
{
    if (path.empty()) {
        return false;
    }
    const auto best = shortest_path(path.front(), path.back());
    return std::equal(best.begin(), best.end(), path.begin(), path.end());
}

} // namespace laps::topology
