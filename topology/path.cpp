#include "topology/path.hpp"

#include <algorithm>
#include <functional>
#include <unordered_set>

namespace laps::topology {

path_key make_path_key(const fabric& f, std::span<const node_id> path)
{
    path_key key;
    key.nodes_desc.assign(path.begin(), path.end());
    std::sort(key.nodes_desc.begin(), key.nodes_desc.end(), std::greater<>());
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
        const auto l = f.link_between(path[i], path[i + 1]);
        if (!l) {
            throw path_error("path " + describe_path(f, path) + ": " + f.name(path[i]) + " and " + f.name(path[i + 1]) +
                             " are not linked");
        }
        key.links_desc.push_back(*l);
        key.cost = key.cost + path_cost{f.link_at(*l).weight, f.link_at(*l).delay_ns};
    }
    std::sort(key.links_desc.begin(), key.links_desc.end(), std::greater<>());
    return key;
}

path_cost cost_of(const fabric& f, std::span<const node_id> path)
{
    return make_path_key(f, path).cost;
}

bool is_loopless(std::span<const node_id> path)
{
    std::unordered_set<node_id> seen;
    for (const node_id n : path) {
        if (!seen.insert(n).second) {
            return false;
        }
    }
    return true;
}

std::vector<node_id> reversed(std::span<const node_id> path)
{
    return {path.rbegin(), path.rend()};
}

std::string describe_path(const fabric& f, std::span<const node_id> path)
{
    std::string out;
    for (const node_id n : path) {
        if (!out.empty()) {
            out += " > ";
        }
        if (n < f.node_count()) {
            out += f.name(n);
        } else {
            out += '#';
            out += std::to_string(n);
        }
    }
    return out;
}

} // namespace laps::topology
