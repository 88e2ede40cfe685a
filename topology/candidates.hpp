#pragma once
// Candidate paths per (source host, destination host), with their anchors and
// delays, and the per-host tables (PST + PIT) LAPS loads.
//
// Two ways to choose candidates:
// - paper (§IV-A): rail: one path inside a cluster, one through each rail
//   switch between clusters; dragonfly: one path to a host on the same switch,
//   the direct path plus one through each other switch of the group inside a
//   group, the direct path plus one through each other group between groups
//   (through the switch of that group that gives the best such path);
// - yen: the k best loopless paths (path.hpp order), none heavier than
//   `stretch` times the best (in weight: hops when links weigh 1).
// `automatic` picks paper for rail and dragonfly fabrics, yen otherwise.
// Candidates are in path order (shortest first) and loopless.

#include "common/names.hpp"
#include "tables/table_spec.hpp"
#include "topology/baseval.hpp"
#include "topology/routing.hpp"

#include <array>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace laps::topology {

enum class path_strategy { automatic, paper, yen };
inline constexpr std::array path_strategy_names{
    common::named<path_strategy>{"auto", path_strategy::automatic},
    common::named<path_strategy>{"paper", path_strategy::paper},
    common::named<path_strategy>{"yen", path_strategy::yen},
};

struct path_options {
    path_strategy strategy = path_strategy::automatic;
    std::uint32_t k = 8;  // yen: paths per destination, <= tables::max_paths_per_destination
    double stretch = 2.0; // yen: at most stretch x the weight (hops) of the shortest
};

// "auto", "paper", "yen" or "yen:k=8,stretch=2". Throws topology_error.
path_options parse_path_options(std::string_view text);
std::string to_string(const path_options& options);

struct candidate_path {
    std::vector<node_id> nodes;   // source .. destination
    std::vector<node_id> anchors; // waypoints, source and destination excluded
    path_delay delay;

    std::size_t hops() const noexcept { return nodes.size() - 1; }
};

class path_planner {
public:
    // Throws path_error when `paths` cannot apply to the fabric (paper rules on
    // a fat-tree, k out of range).
    path_planner(const routing& r, const path_options& paths, const delay_options& delays);

    const routing& routes() const noexcept { return _routing; }
    const delay_model& delays() const noexcept { return _delays; }
    path_strategy strategy() const noexcept { return _options.strategy; } // paper or yen

    // Candidates from host `src` to host `dst`, best first.
    std::vector<candidate_path> candidates(node_id src, node_id dst) const;

    // The tables of host `src`: a PST row per other host by host index, pids
    // from 0 in that order and in candidate order. Throws path_error when a path
    // needs more than tables::max_anchors anchors, a destination has more than
    // tables::max_paths_per_destination paths or the host more than 65,536.
    tables::table_spec table(node_id src) const;

    // table() for each of `sources`, in parallel with TBB (the caller bounds the
    // threads with tbb::global_control). `visit` runs on worker threads, once
    // per source, possibly concurrently; the tables do not depend on the thread
    // count. Hosts behind the same switch share their path searches.
    void for_each_table(std::span<const node_id> sources,
                        const std::function<void(node_id, const tables::table_spec&)>& visit) const;
    // The same with a PST row only for the destinations each source talks
    // to, `destinations[source]` (sorted host ids; pids from 0 in that
    // order): a testbed of thousands of hosts keeps per pair that talks, not
    // per pair of hosts.
    void for_each_table(std::span<const node_id> sources, std::span<const std::vector<node_id>> destinations,
                        const std::function<void(node_id, const tables::table_spec&)>& visit) const;

private:
    struct core_candidate {
        std::vector<node_id> nodes; // attachment of the source .. of the destination
        std::vector<node_id> anchors;
        delay_model::sums sums;
    };
    using core_candidates = std::vector<core_candidate>;
    class source_group;

    // Between the attachments `from` and `to` of two hosts; `access` is the
    // weight of the hosts' own links when they are leaves (it counts in the
    // stretch limit).
    core_candidates compute(node_id from, node_id to, std::uint32_t access, search_scratch& scratch) const;
    std::vector<std::vector<node_id>> paper_paths(node_id from, node_id to) const;
    std::vector<std::vector<node_id>> yen_paths(node_id from, node_id to, std::uint32_t access,
                                                search_scratch& scratch) const;
    std::uint32_t access_weight(node_id host) const;
    std::vector<node_id> all_hosts() const;
    void tables_of(std::span<const node_id> sources, const std::function<std::span<const node_id>(node_id)>& destinations,
                   const std::function<void(node_id, const tables::table_spec&)>& visit) const;
    void fill_table(node_id src, std::span<const node_id> destinations, source_group& group,
                    tables::table_spec& spec) const;

    const routing& _routing;
    const fabric& _fabric;
    path_options _options;
    delay_model _delays;
    std::vector<std::vector<node_id>> _switches_by_group; // paper rules
    std::vector<node_id> _ungrouped_switches;
};

} // namespace laps::topology
