#pragma once
// One destination with k paths (pids 0..k-1, baseVal 10 us + 1 us per pid):
// the table the selection and ACK benches run on.

#include "tables/path_table.hpp"

namespace laps::bench {

inline tables::path_table one_destination(int k)
{
    tables::table_spec spec;
    tables::pst_row dst{tables::address::ipv4(0x0a000002), {}};
    for (int i = 0; i < k; ++i) {
        tables::pit_row r;
        r.pid = static_cast<tables::path_id>(i);
        r.base_ns = 10'000 + 1'000 * i;
        spec.pit.push_back(r);
        dst.pids.push_back(r.pid);
    }
    spec.pst.push_back(dst);
    tables::path_table_options o;
    o.pit_capacity = 64;
    return tables::path_table(spec, o);
}

} // namespace laps::bench
