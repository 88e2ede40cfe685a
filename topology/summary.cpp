#include "topology/summary.hpp"

#include <ostream>

namespace laps::topology {

void table_summary::add(const tables::table_spec& spec)
{
    ++tables;
    pst_entries += spec.pst.size();
    pit_entries += spec.pit.size();
    for (const auto& row : spec.pst) {
        ++paths_per_destination[row.pids.size()];
    }
    for (const auto& row : spec.pit) {
        ++hops[row.hop_count];
        ++anchors[row.anchor_count];
    }
}

void table_summary::merge(const table_summary& other)
{
    tables += other.tables;
    pst_entries += other.pst_entries;
    pit_entries += other.pit_entries;
    for (const auto& [k, v] : other.paths_per_destination) {
        paths_per_destination[k] += v;
    }
    for (const auto& [k, v] : other.hops) {
        hops[k] += v;
    }
    for (const auto& [k, v] : other.anchors) {
        anchors[k] += v;
    }
}

void write_histogram(std::ostream& out, const std::map<std::size_t, std::size_t>& histogram)
{
    out << "{";
    bool first = true;
    for (const auto& [k, v] : histogram) {
        out << (first ? "" : ", ") << k << ": " << v;
        first = false;
    }
    out << "}";
}

} // namespace laps::topology
