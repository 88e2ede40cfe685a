#include "topology/search.hpp"

#include <algorithm>

namespace laps::topology {

void search_scratch::begin(std::size_t n)
{
    if (seen.size() != n) {
        seen.assign(n, 0);
        settled.assign(n, 0);
        blocked.assign(n, 0);
        cost.assign(n, path_cost{});
        parent.assign(n, no_index);
        depth.assign(n, 0);
        generation = 0;
    }
    if (++generation == 0) {
        // Wrapped: old stamps could match again.
        std::fill(seen.begin(), seen.end(), 0);
        std::fill(settled.begin(), settled.end(), 0);
        std::fill(blocked.begin(), blocked.end(), 0);
        generation = 1;
    }
    heap.clear();
}

namespace {

bool heap_after(const search_scratch::entry& x, const search_scratch::entry& y) noexcept
{
    if (x.f != y.f) {
        return x.f > y.f;
    }
    if (x.g != y.g) {
        return x.g > y.g;
    }
    return x.node > y.node;
}

// True when the path to `a` beats the path to `b` (both settled, as good on
// cost): below their lowest common ancestor the two branches share no node,
// and the branch whose highest node is lower wins (an empty branch wins).
bool branch_better(const search_scratch& s, std::uint32_t a, std::uint32_t b) noexcept
{
    std::int64_t max_a = -1;
    std::int64_t max_b = -1;
    while (a != b) {
        if (s.depth[a] >= s.depth[b]) {
            max_a = std::max<std::int64_t>(max_a, a);
            a = s.parent[a];
        } else {
            max_b = std::max<std::int64_t>(max_b, b);
            b = s.parent[b];
        }
    }
    return max_a < max_b;
}

bool is_forbidden(const search_limits& limits, std::uint32_t node) noexcept
{
    return std::find(limits.forbidden_first.begin(), limits.forbidden_first.end(), node) != limits.forbidden_first.end();
}

// Dijkstra / A* from `from`; stops once `target` is settled (no_index: never).
// `estimate` is a consistent lower bound of the remaining cost, or null.
bool run(const core_graph& graph, std::uint32_t from, std::uint32_t target, const std::vector<path_cost>* estimate,
         const search_limits& limits, search_scratch& s)
{
    s.begin(graph.size());
    s.pruned_weight = std::numeric_limits<std::uint64_t>::max();
    const std::uint32_t gen = s.generation;
    for (const auto b : limits.blocked) {
        s.blocked[b] = gen;
    }
    auto remaining = [&](std::uint32_t n) { return estimate != nullptr ? (*estimate)[n] : path_cost{}; };

    if (s.blocked[from] == gen || (estimate != nullptr && remaining(from) == unreachable_cost)) {
        return false;
    }
    s.seen[from] = gen;
    s.cost[from] = path_cost{};
    s.parent[from] = no_index;
    s.depth[from] = 0;
    s.heap.push_back({remaining(from), path_cost{}, from});

    while (!s.heap.empty()) {
        std::pop_heap(s.heap.begin(), s.heap.end(), heap_after);
        const auto top = s.heap.back();
        s.heap.pop_back();
        const std::uint32_t v = top.node;
        if (s.settled[v] == gen || top.g != s.cost[v]) {
            continue; // stale entry
        }
        s.settled[v] = gen;

        // Choose the parent among all settled best predecessors.
        if (v != from) {
            std::uint32_t best = no_index;
            for (const auto& e : graph.edges_of(v)) {
                const std::uint32_t p = e.peer;
                if (s.settled[p] != gen || (p == from && is_forbidden(limits, v))) {
                    continue;
                }
                if (s.cost[p] + e.cost != s.cost[v]) {
                    continue;
                }
                if (best == no_index || branch_better(s, p, best)) {
                    best = p;
                }
            }
            s.parent[v] = best;
            s.depth[v] = s.depth[best] + 1;
        }
        if (v == target) {
            return true;
        }

        for (const auto& e : graph.edges_of(v)) {
            const std::uint32_t w = e.peer;
            if (s.settled[w] == gen || s.blocked[w] == gen || (v == from && is_forbidden(limits, w))) {
                continue;
            }
            const path_cost g = s.cost[v] + e.cost;
            const path_cost h = remaining(w);
            if (h == unreachable_cost) {
                continue;
            }
            if (const std::uint64_t f = std::uint64_t{g.weight} + h.weight; f > limits.max_weight) {
                s.pruned_weight = std::min(s.pruned_weight, f);
                continue;
            }
            if (s.seen[w] != gen || g < s.cost[w]) {
                s.seen[w] = gen;
                s.cost[w] = g;
                s.heap.push_back({g + h, g, w});
                std::push_heap(s.heap.begin(), s.heap.end(), heap_after);
            }
        }
    }
    return target == no_index;
}

} // namespace

core_tree shortest_tree(const core_graph& graph, std::uint32_t root, search_scratch& scratch)
{
    run(graph, root, no_index, nullptr, search_limits{}, scratch);
    core_tree tree;
    tree.parent.assign(graph.size(), no_index);
    tree.cost.assign(graph.size(), unreachable_cost);
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        if (scratch.settled[i] == scratch.generation) {
            tree.parent[i] = scratch.parent[i];
            tree.cost[i] = scratch.cost[i];
        }
    }
    return tree;
}

bool best_path(const core_graph& graph, const core_tree& to_tree, std::uint32_t from, std::uint32_t to,
               const search_limits& limits, search_scratch& scratch, std::vector<std::uint32_t>& out)
{
    out.clear();
    // Search within a weight bound first: the unrestricted distance, which a
    // path that avoids nothing on its way meets. Raise the bound to the lowest
    // estimate left out until a path is found or the limit is reached. Every
    // node of a best path is within the bound that finds it, so the result is
    // the same as one unbounded search, with far fewer nodes touched in fabrics
    // rich in equal paths.
    if (to_tree.cost[from] == unreachable_cost) {
        return false;
    }
    search_limits bounded = limits;
    std::uint64_t bound = to_tree.cost[from].weight;
    while (true) {
        if (bound > limits.max_weight) {
            return false;
        }
        bounded.max_weight = static_cast<std::uint32_t>(bound);
        if (run(graph, from, to, &to_tree.cost, bounded, scratch)) {
            break;
        }
        if (scratch.pruned_weight == std::numeric_limits<std::uint64_t>::max()) {
            return false;
        }
        bound = scratch.pruned_weight;
    }
    for (std::uint32_t n = to; n != no_index; n = scratch.parent[n]) {
        out.push_back(n);
    }
    std::reverse(out.begin(), out.end());
    return true;
}

} // namespace laps::topology
