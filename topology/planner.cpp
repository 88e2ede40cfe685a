// path_planner: per-host tables, one host or many in parallel.

#include "topology/candidates.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <map>
#include <optional>
#include <tuple>

namespace laps::topology {

// The hosts that reach the fabric through the same core node, in the same way
// (leaf or not, same link weight), have the same core candidates to every
// destination: computed once per destination attachment and kept while the
// group's tables are built.
class path_planner::source_group {
public:
    source_group(node_id from, bool leaf, std::uint32_t access, std::size_t core_nodes)
        : _from(from), _leaf(leaf), _access(access), _cache(core_nodes * 2)
    {
    }

    const core_candidates& get(const path_planner& planner, std::uint32_t to, bool to_leaf, std::uint32_t to_access)
    {
        auto& slot = _cache[std::size_t{to} * 2 + (to_leaf ? 1 : 0)];
        for (const auto& [access, cands] : slot) {
            if (access == to_access) {
                return cands;
            }
        }
        const auto& r = planner._routing;
        slot.emplace_back(to_access, planner.compute(_from, r.core().node_of[to], _access + to_access, _scratch));
        return slot.back().second;
    }

    bool leaf() const noexcept { return _leaf; }

private:
    node_id _from;
    bool _leaf;
    std::uint32_t _access;
    // Per destination attachment and leaf flag, by the destination's link weight.
    std::vector<std::vector<std::pair<std::uint32_t, core_candidates>>> _cache;
    search_scratch _scratch;
};

void path_planner::fill_table(node_id src, std::span<const node_id> destinations, source_group& group,
                              tables::table_spec& spec) const
{
    spec.pst.clear();
    spec.pit.clear();
    spec.pst.reserve(destinations.size());
    const std::optional<link_id> src_access =
        group.leaf() ? std::optional<link_id>(_routing.access_link(src)) : std::nullopt;
    std::size_t next_pid = 0;
    for (const node_id dst : destinations) {
        if (dst == src) {
            continue;
        }
        const bool dst_leaf = _routing.is_leaf(dst);
        const auto& cands = group.get(*this, _routing.attachment(dst), dst_leaf, access_weight(dst));
        if (cands.size() > tables::max_paths_per_destination) {
            throw path_error("host " + _fabric.name(src) + ": " + std::to_string(cands.size()) + " paths to " +
                             _fabric.name(dst) + ", more than the " +
                             std::to_string(tables::max_paths_per_destination) + " a PST row holds");
        }
        if (next_pid + cands.size() > 65536) {
            throw path_error("host " + _fabric.name(src) + " needs more than 65,536 paths (16-bit pids); use fewer "
                             "paths per destination");
        }
        const std::optional<link_id> dst_access =
            dst_leaf ? std::optional<link_id>(_routing.access_link(dst)) : std::nullopt;
        const std::size_t access = (group.leaf() ? 1u : 0u) + (dst_leaf ? 1u : 0u);
        tables::pst_row row;
        row.destination = _fabric.address_of(dst);
        row.pids.reserve(cands.size());
        for (const auto& c : cands) {
            const std::size_t hops = c.nodes.size() - 1 + access;
            if (hops > 255) {
                throw path_error("host " + _fabric.name(src) + ": a path to " + _fabric.name(dst) + " has " +
                                 std::to_string(hops) + " hops, more than a PIT row holds (255)");
            }
            tables::pit_row pit;
            pit.pid = static_cast<tables::path_id>(next_pid++);
            pit.valid = true;
            const path_delay d = _delays.combine(c.sums, src_access, dst_access);
            pit.base_ns = d.base_ns;
            pit.uncongested_ns = d.uncongested_ns;
            pit.hop_count = static_cast<std::uint8_t>(hops);
            pit.anchor_count = static_cast<std::uint8_t>(c.anchors.size());
            std::copy(c.anchors.begin(), c.anchors.end(), pit.anchors.begin());
            row.pids.push_back(pit.pid);
            spec.pit.push_back(pit);
        }
        spec.pst.push_back(std::move(row));
    }
}

tables::table_spec path_planner::table(node_id src) const
{
    if (!_fabric.is_host(src)) {
        throw path_error("table: node " + std::to_string(src) + " is not a host");
    }
    source_group group(_routing.core().node_of[_routing.attachment(src)], _routing.is_leaf(src), access_weight(src),
                       _routing.core().size());
    tables::table_spec spec;
    fill_table(src, all_hosts(), group, spec);
    return spec;
}

std::vector<node_id> path_planner::all_hosts() const
{
    std::vector<node_id> hosts(_fabric.host_count());
    for (std::size_t h = 0; h < hosts.size(); ++h) {
        hosts[h] = static_cast<node_id>(h);
    }
    return hosts;
}

void path_planner::for_each_table(std::span<const node_id> sources,
                                  const std::function<void(node_id, const tables::table_spec&)>& visit) const
{
    const auto all = all_hosts();
    tables_of(sources, [&all](node_id) { return std::span<const node_id>(all); }, visit);
}

void path_planner::for_each_table(std::span<const node_id> sources, std::span<const std::vector<node_id>> destinations,
                                  const std::function<void(node_id, const tables::table_spec&)>& visit) const
{
    tables_of(sources, [&destinations](node_id s) { return std::span<const node_id>(destinations[s]); }, visit);
}

void path_planner::tables_of(std::span<const node_id> sources,
                             const std::function<std::span<const node_id>(node_id)>& destinations,
                             const std::function<void(node_id, const tables::table_spec&)>& visit) const
{
    // Group the sources by (attachment, leaf, link weight), keeping their order
    // inside a group.
    using group_key = std::tuple<std::uint32_t, bool, std::uint32_t>;
    std::map<group_key, std::vector<node_id>> by_attachment;
    for (const node_id s : sources) {
        if (!_fabric.is_host(s)) {
            throw path_error("for_each_table: node " + std::to_string(s) + " is not a host");
        }
        by_attachment[{_routing.attachment(s), _routing.is_leaf(s), access_weight(s)}].push_back(s);
    }
    const std::vector<std::pair<group_key, std::vector<node_id>>> groups(by_attachment.begin(), by_attachment.end());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, groups.size(), 1), [&](const auto& range) {
        tables::table_spec spec;
        for (std::size_t i = range.begin(); i != range.end(); ++i) {
            const auto& [key, hosts] = groups[i];
            source_group group(_routing.core().node_of[std::get<0>(key)], std::get<1>(key), std::get<2>(key),
                               _routing.core().size());
            for (const node_id s : hosts) {
                fill_table(s, destinations(s), group, spec);
                visit(s, spec);
            }
        }
    });
}

} // namespace laps::topology
