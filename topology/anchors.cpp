#include "topology/anchors.hpp"

namespace laps::topology {

std::vector<node_id> compute_anchors(const routing& r, std::span<const node_id> path)
{
    std::vector<node_id> anchors;
    if (path.size() < 2) {
        return anchors;
    }
    const std::size_t last = path.size() - 1;
    std::size_t from = 0;
    while (true) {
        // A link is the best path between its ends unless weights say
        // otherwise; then no anchor list can make a packet take it.
        if (!r.is_shortest(path.subspan(from, 2))) {
            const fabric& f = r.topology();
            throw path_error("path " + describe_path(f, path) + " uses the link " + f.name(path[from]) + " - " +
                             f.name(path[from + 1]) +
                             ", which is not the best path between its ends (see link weights): anchors cannot "
                             "make a packet take it");
        }
        std::size_t reach = from + 1;
        while (reach < last && r.is_shortest(path.subspan(from, reach + 2 - from))) {
            ++reach;
        }
        if (reach == last) {
            return anchors;
        }
        anchors.push_back(path[reach]);
        from = reach;
    }
}

std::vector<node_id> reverse_anchors(std::span<const node_id> anchors)
{
    return {anchors.rbegin(), anchors.rend()};
}

} // namespace laps::topology
