#pragma once
// One emulated host as the fabric knows it, whatever transport it runs
// (fabric/hosts/): its address, its link rate, its clock and the PST/PIT its
// candidate paths come from.

#include "common/time.hpp"
#include "tables/table_spec.hpp"
#include "topology/model.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace laps::fabric {

using common::time_ns;

inline constexpr time_ns no_wake = std::numeric_limits<time_ns>::max();

struct host_info {
    topology::node_id id = 0;
    std::uint32_t ipv4 = 0;        // host order
    double rate_bps = 0;           // loads, ideal FCTs and the AIMD cap are relative to it
    time_ns clock_offset_ns = 0;   // clock = virtual time + this (+ drift and steps)
    double drift_ppm = 0;          // the clock gains this x 1e-6 ns per virtual ns
    struct clock_step {
        time_ns at = 0;            // virtual time
        time_ns step = 0;          // added from then on
    };
    std::vector<clock_step> clock_steps; // by time
    tables::table_spec table;      // its PST/PIT (topology::path_planner)

    // What the host's clock reads at virtual time `v` (an engine's `now`).
    time_ns clock(time_ns v) const noexcept
    {
        time_ns reading = v + clock_offset_ns;
        if (drift_ppm != 0) {
            reading += static_cast<time_ns>(std::llround(static_cast<double>(v) * drift_ppm * 1e-6));
        }
        for (const auto& s : clock_steps) {
            reading += v >= s.at ? s.step : 0;
        }
        return reading;
    }

    // The first virtual time >= `from` at which the clock reads at least
    // `reading` (when an engine deadline falls due).
    time_ns virtual_time_of(time_ns reading, time_ns from) const noexcept;
};

} // namespace laps::fabric
