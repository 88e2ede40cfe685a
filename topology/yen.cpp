#include "topology/yen.hpp"

#include <algorithm>
#include <set>

namespace laps::topology {

namespace {

struct found_path {
    path_key key;
    std::vector<std::uint32_t> nodes; // core indices
    std::size_t deviation = 0;        // index of the node where it left its parent

    bool operator<(const found_path& o) const { return key < o.key; }
};

path_key core_key(const core_graph& g, const std::vector<std::uint32_t>& nodes)
{
    path_key key;
    key.nodes_desc.reserve(nodes.size());
    key.links_desc.reserve(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        key.nodes_desc.push_back(g.node_of[nodes[i]]);
        if (i + 1 < nodes.size()) {
            for (const auto& e : g.edges_of(nodes[i])) {
                if (e.peer == nodes[i + 1]) {
                    key.links_desc.push_back(e.link);
                    key.cost = key.cost + e.cost;
                    break;
                }
            }
        }
    }
    std::sort(key.nodes_desc.begin(), key.nodes_desc.end(), std::greater<>());
    std::sort(key.links_desc.begin(), key.links_desc.end(), std::greater<>());
    return key;
}

} // namespace

std::vector<std::vector<std::uint32_t>> k_shortest_core_paths(const routing& r, std::uint32_t from, std::uint32_t to,
                                                              std::uint32_t k, std::uint32_t max_weight,
                                                              search_scratch& scratch)
{
    std::vector<std::vector<std::uint32_t>> result;
    if (k == 0) {
        return result;
    }
    const core_graph& g = r.core();
    const core_tree& to_tree = r.tree(to);
    if (to_tree.cost[from].weight > max_weight) {
        return result;
    }
    if (from == to) {
        result.push_back({from});
        return result;
    }

    std::vector<found_path> chosen;
    std::set<found_path> pending;                 // Yen's B, best first
    std::set<std::vector<std::uint32_t>> known;   // in `chosen` or `pending`
    {
        std::vector<std::uint32_t> first;
        for (std::uint32_t c = from; c != no_index; c = to_tree.parent[c]) {
            first.push_back(c);
        }
        known.insert(first);
        chosen.push_back(found_path{core_key(g, first), std::move(first), 0});
    }

    std::vector<std::uint32_t> spur;
    std::vector<std::uint32_t> forbidden;
    while (chosen.size() < k) {
        const found_path prev = chosen.back();
        std::uint32_t root_weight = 0; // of prev.nodes[0 .. j]
        for (std::size_t j = 0; j + 1 < prev.nodes.size(); ++j) {
            if (j > 0) {
                for (const auto& e : g.edges_of(prev.nodes[j - 1])) {
                    if (e.peer == prev.nodes[j]) {
                        root_weight += e.cost.weight;
                        break;
                    }
                }
            }
            if (j < prev.deviation) {
                continue; // Lawler: spurs before the deviation were tried from the parent
            }
            // Once `pending` holds every path that can still be chosen, a spur
            // heavier than its worst would be dropped at once: do not search
            // beyond it.
            std::uint32_t budget = max_weight;
            if (pending.size() >= k - chosen.size()) {
                budget = std::min(budget, std::prev(pending.end())->key.cost.weight);
            }
            if (root_weight >= budget) {
                break; // the root alone uses up the budget
            }
            // Paths already chosen with this root may not leave it the same way.
            forbidden.clear();
            for (const auto& p : chosen) {
                if (p.nodes.size() > j + 1 && std::equal(p.nodes.begin(), p.nodes.begin() + static_cast<std::ptrdiff_t>(j + 1),
                                                         prev.nodes.begin())) {
                    forbidden.push_back(p.nodes[j + 1]);
                }
            }
            const search_limits limits{std::span(prev.nodes.data(), j), forbidden, budget - root_weight};
            if (!best_path(g, to_tree, prev.nodes[j], to, limits, scratch, spur)) {
                continue;
            }
            std::vector<std::uint32_t> total(prev.nodes.begin(), prev.nodes.begin() + static_cast<std::ptrdiff_t>(j));
            total.insert(total.end(), spur.begin(), spur.end());
            if (!known.insert(total).second) {
                continue;
            }
            pending.insert(found_path{core_key(g, total), std::move(total), j});
            // Only the best k - |chosen| candidates can ever be chosen.
            while (pending.size() > k - chosen.size()) {
                pending.erase(std::prev(pending.end()));
            }
        }
        if (pending.empty()) {
            break;
        }
        chosen.push_back(*pending.begin());
        pending.erase(pending.begin());
    }

    result.reserve(chosen.size());
    for (auto& p : chosen) {
        result.push_back(std::move(p.nodes));
    }
    return result;
}

std::vector<std::vector<node_id>> k_shortest_paths(const routing& r, node_id from, node_id to, std::uint32_t k,
                                                   std::uint32_t max_weight)
{
    const fabric& f = r.topology();
    if (from >= f.node_count() || to >= f.node_count()) {
        throw path_error("k_shortest_paths: node id out of range");
    }
    std::vector<std::vector<node_id>> out;
    if (from == to) {
        out.push_back({from});
        return out;
    }
    std::uint32_t access = 0; // weight of the leaves' links
    for (const node_id end : {from, to}) {
        if (r.is_leaf(end)) {
            access += f.link_at(r.access_link(end)).weight;
        }
    }
    if (max_weight < access) {
        return out;
    }
    search_scratch scratch;
    for (const auto& core :
         k_shortest_core_paths(r, r.attachment(from), r.attachment(to), k, max_weight - access, scratch)) {
        std::vector<node_id> path;
        path.reserve(core.size() + 2);
        if (r.is_leaf(from)) {
            path.push_back(from);
        }
        for (const auto c : core) {
            path.push_back(r.core().node_of[c]);
        }
        if (r.is_leaf(to)) {
            path.push_back(to);
        }
        out.push_back(std::move(path));
    }
    return out;
}

} // namespace laps::topology
