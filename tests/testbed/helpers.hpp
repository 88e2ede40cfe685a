#pragma once
// Scenarios written inline, runs that check every mbuf came back, and the
// numbers the tests look at.

#include "fabric/hosts/laps_hosts.hpp"
#include "fabric/hosts/roce_hosts.hpp"
#include "fabric/results.hpp"
#include "fabric/scenario.hpp"
#include "fabric/simulation.hpp"

#include <gtest/gtest.h>

#include <string>

namespace laps::test {

// Relative paths (topologies, workloads) resolve from the source tree.
inline fabric::scenario scenario_from(const std::string& yaml, const std::string& name = "<test>")
{
    return fabric::parse_scenario(yaml, name, LAPS_SOURCE_ROOT);
}

// Releases the simulation and checks that every pool got every mbuf back.
inline void expect_no_leak(fabric::simulation& sim)
{
    for (const auto& p : sim.release()) {
        EXPECT_EQ(p.in_use, 0u) << "mbufs of pool " << p.name << " not returned";
    }
}

// Runs to the end and summarises.
inline fabric::run_summary run_to_end(const fabric::scenario& s, const fabric::run_options& o = {})
{
    fabric::simulation sim(s, o);
    sim.run();
    auto summary = fabric::summarize(sim);
    expect_no_leak(sim);
    return summary;
}

// DATA packets host `src` sent on each of its pids.
inline std::vector<std::uint64_t> packets_per_path(const fabric::simulation& sim, topology::node_id src)
{
    const auto counts = sim.engine(src).packets_per_path();
    return {counts.begin(), counts.end()};
}

inline double share(std::uint64_t part, std::uint64_t whole)
{
    return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

} // namespace laps::test
