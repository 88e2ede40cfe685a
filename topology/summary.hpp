#pragma once
// Table statistics, as laps-paths --summary prints them.

#include "tables/table_spec.hpp"

#include <cstddef>
#include <iosfwd>
#include <map>

namespace laps::topology {

struct table_summary {
    std::size_t tables = 0;
    std::size_t pst_entries = 0;
    std::size_t pit_entries = 0;
    // Histograms over all tables added: value -> count.
    std::map<std::size_t, std::size_t> paths_per_destination;
    std::map<std::size_t, std::size_t> hops;
    std::map<std::size_t, std::size_t> anchors;

    void add(const tables::table_spec& spec);
    void merge(const table_summary& other);
};

// "{1: 7, 8: 56}"
void write_histogram(std::ostream& out, const std::map<std::size_t, std::size_t>& histogram);

} // namespace laps::topology
