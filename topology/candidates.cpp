#include "topology/key_values.hpp"
#include "topology/candidates.hpp"

#include "common/names.hpp"
#include "topology/anchors.hpp"
#include "topology/yen.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace laps::topology {

path_options parse_path_options(std::string_view text)
{
    path_options o;
    const auto colon = text.find(':');
    const std::string_view name = text.substr(0, colon);
    const auto strategy = common::find_named(path_strategy_names, name);
    if (!strategy) {
        throw topology_error("paths '" + std::string(text) + "': expected auto, paper or yen[:k=N,stretch=X]");
    }
    o.strategy = *strategy;
    if (colon == std::string_view::npos) {
        return o;
    }
    if (o.strategy != path_strategy::yen) {
        throw topology_error("paths '" + std::string(text) + "': only yen takes parameters");
    }
    for_each_key_value(text.substr(colon + 1), [&o](std::string_view, std::string_view key, std::string_view value) {
        const char* end = value.data() + value.size();
        if (key == "k") {
            const auto [ptr, ec] = std::from_chars(value.data(), end, o.k);
            if (ec != std::errc() || ptr != end || o.k < 1 || o.k > tables::max_paths_per_destination) {
                throw topology_error("paths: k must be an integer in [1, " +
                                     std::to_string(tables::max_paths_per_destination) + "], got '" +
                                     std::string(value) + "'");
            }
        } else if (key == "stretch") {
            const auto [ptr, ec] = std::from_chars(value.data(), end, o.stretch);
            if (ec != std::errc() || ptr != end || !(o.stretch >= 1) || !std::isfinite(o.stretch)) {
                throw topology_error("paths: stretch must be a number >= 1, got '" + std::string(value) + "'");
            }
        } else {
            throw topology_error("paths: unknown yen parameter '" + std::string(key) + "' (known: k, stretch)");
        }
    });
    return o;
}

std::string to_string(const path_options& options)
{
    switch (options.strategy) {
    case path_strategy::automatic:
    case path_strategy::paper:
        return std::string(common::name_of(path_strategy_names, options.strategy));
    case path_strategy::yen: {
        char stretch[32];
        const auto [ptr, ec] = std::to_chars(stretch, stretch + sizeof stretch, options.stretch);
        return "yen:k=" + std::to_string(options.k) + ",stretch=" + std::string(stretch, ec == std::errc() ? ptr : stretch);
    }
    }
    return "?";
}

path_planner::path_planner(const routing& r, const path_options& paths, const delay_options& delays)
    : _routing(r), _fabric(r.topology()), _options(paths), _delays(r.topology(), delays)
{
    const auto family = _fabric.family();
    const bool paper_family = family == fabric_family::rail || family == fabric_family::dragonfly;
    if (_options.strategy == path_strategy::automatic) {
        _options.strategy = paper_family ? path_strategy::paper : path_strategy::yen;
    }
    if (_options.strategy == path_strategy::paper && !paper_family) {
        throw path_error("the paper's path rules need a rail or dragonfly fabric, this one is " +
                         std::string(to_string(family)) + "; use yen");
    }
    if (_options.strategy == path_strategy::yen &&
        (_options.k < 1 || _options.k > tables::max_paths_per_destination || !(_options.stretch >= 1))) {
        throw path_error("yen: k must be in [1, " + std::to_string(tables::max_paths_per_destination) +
                         "] and stretch >= 1");
    }
    for (node_id n = static_cast<node_id>(_fabric.host_count()); n < _fabric.node_count(); ++n) {
        const auto g = _fabric.at(n).group;
        if (g == no_group) {
            _ungrouped_switches.push_back(n);
            continue;
        }
        if (static_cast<std::size_t>(g) >= _switches_by_group.size()) {
            _switches_by_group.resize(static_cast<std::size_t>(g) + 1);
        }
        _switches_by_group[static_cast<std::size_t>(g)].push_back(n);
    }
}

namespace {

// a .. m followed by m .. b, as one node sequence.
std::vector<node_id> join(std::vector<node_id> first, const std::vector<node_id>& second)
{
    first.insert(first.end(), second.begin() + 1, second.end());
    return first;
}

} // namespace

std::vector<std::vector<node_id>> path_planner::paper_paths(node_id from, node_id to) const
{
    if (from == to) {
        return {{from}};
    }
    const std::int32_t from_group = _fabric.at(from).group;
    const std::int32_t to_group = _fabric.at(to).group;
    for (const node_id n : {from, to}) {
        if (_fabric.at(n).group == no_group) {
            throw path_error("paper path rules: " + _fabric.name(n) +
                             " has no group (cluster or dragonfly group); set `group:` in the topology");
        }
    }
    auto via = [&](node_id m) { return join(_routing.shortest_path(from, m), _routing.shortest_path(m, to)); };
    std::vector<std::vector<node_id>> paths;

    if (_fabric.family() == fabric_family::rail) {
        // Inside a cluster: its NVLink switch only. Between clusters: one path
        // through each rail switch (the direct path is one of them).
        if (from_group == to_group) {
            paths.push_back(_routing.shortest_path(from, to));
        } else {
            for (const node_id r : _ungrouped_switches) {
                paths.push_back(via(r));
            }
            if (paths.empty()) {
                paths.push_back(_routing.shortest_path(from, to));
            }
        }
    } else {
        paths.push_back(_routing.shortest_path(from, to));
        const auto& own = _switches_by_group.at(static_cast<std::size_t>(from_group));
        if (from_group == to_group) {
            for (const node_id m : own) {
                if (m != from && m != to) {
                    paths.push_back(via(m));
                }
            }
        } else {
            for (std::size_t g = 0; g < _switches_by_group.size(); ++g) {
                if (static_cast<std::int32_t>(g) == from_group || static_cast<std::int32_t>(g) == to_group ||
                    _switches_by_group[g].empty()) {
                    continue;
                }
                // Through this group: its switch that gives the best loopless path.
                std::vector<node_id> best;
                path_key best_key;
                for (const node_id m : _switches_by_group[g]) {
                    auto p = via(m);
                    if (!is_loopless(p)) {
                        continue;
                    }
                    auto key = make_path_key(_fabric, p);
                    if (best.empty() || key < best_key) {
                        best = std::move(p);
                        best_key = std::move(key);
                    }
                }
                if (!best.empty()) {
                    paths.push_back(std::move(best));
                }
            }
        }
    }

    // Loopless, distinct, in path order.
    std::vector<std::pair<path_key, std::vector<node_id>>> keyed;
    for (auto& p : paths) {
        if (is_loopless(p)) {
            keyed.emplace_back(make_path_key(_fabric, p), std::move(p));
        }
    }
    std::sort(keyed.begin(), keyed.end());
    keyed.erase(std::unique(keyed.begin(), keyed.end(),
                            [](const auto& x, const auto& y) { return x.second == y.second; }),
                keyed.end());
    std::vector<std::vector<node_id>> out;
    out.reserve(keyed.size());
    for (auto& [key, p] : keyed) {
        out.push_back(std::move(p));
    }
    return out;
}

std::vector<std::vector<node_id>> path_planner::yen_paths(node_id from, node_id to, std::uint32_t access,
                                                          search_scratch& scratch) const
{
    const std::uint32_t cf = _routing.core_index(from);
    const std::uint32_t ct = _routing.core_index(to);
    const std::uint32_t shortest = _routing.tree(ct).cost[cf].weight + access;
    // The stretch bounds the weight of the host-to-host path; the search sees
    // only the core part.
    const auto max_weight = static_cast<std::uint32_t>(std::floor(_options.stretch * shortest + 1e-9));
    std::vector<std::vector<node_id>> out;
    for (const auto& core : k_shortest_core_paths(_routing, cf, ct, _options.k, max_weight - access, scratch)) {
        std::vector<node_id> p;
        p.reserve(core.size());
        for (const auto c : core) {
            p.push_back(_routing.core().node_of[c]);
        }
        out.push_back(std::move(p));
    }
    return out;
}

path_planner::core_candidates path_planner::compute(node_id from, node_id to, std::uint32_t access,
                                                    search_scratch& scratch) const
{
    auto paths = _options.strategy == path_strategy::paper ? paper_paths(from, to) : yen_paths(from, to, access, scratch);
    core_candidates out;
    out.reserve(paths.size());
    for (auto& p : paths) {
        core_candidate c;
        c.anchors = compute_anchors(_routing, p);
        if (c.anchors.size() > tables::max_anchors) {
            throw path_error("path " + describe_path(_fabric, p) + " needs " + std::to_string(c.anchors.size()) +
                             " anchors, more than the " + std::to_string(tables::max_anchors) +
                             " a LAPS header carries; use fewer or shorter paths (yen: lower stretch)");
        }
        c.sums = _delays.sum(p);
        c.nodes = std::move(p);
        out.push_back(std::move(c));
    }
    return out;
}

std::uint32_t path_planner::access_weight(node_id host) const
{
    return _routing.is_leaf(host) ? _fabric.link_at(_routing.access_link(host)).weight : 0;
}

std::vector<candidate_path> path_planner::candidates(node_id src, node_id dst) const
{
    if (!_fabric.is_host(src) || !_fabric.is_host(dst)) {
        throw path_error("candidates: node ids " + std::to_string(src) + " and " + std::to_string(dst) +
                         " must both be hosts (< " + std::to_string(_fabric.host_count()) + ")");
    }
    std::vector<candidate_path> out;
    if (src == dst) {
        return out;
    }
    const bool src_leaf = _routing.is_leaf(src);
    const bool dst_leaf = _routing.is_leaf(dst);
    search_scratch scratch;
    const node_id from = _routing.core().node_of[_routing.attachment(src)];
    const node_id to = _routing.core().node_of[_routing.attachment(dst)];
    for (auto& c : compute(from, to, access_weight(src) + access_weight(dst), scratch)) {
        candidate_path p;
        if (src_leaf) {
            p.nodes.push_back(src);
        }
        p.nodes.insert(p.nodes.end(), c.nodes.begin(), c.nodes.end());
        if (dst_leaf) {
            p.nodes.push_back(dst);
        }
        p.anchors = std::move(c.anchors);
        p.delay = _delays.of(p.nodes);
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace laps::topology
