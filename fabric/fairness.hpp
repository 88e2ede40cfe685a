#pragma once
// Fairness of a traffic item (docs/congestion.md, "How it does"): does a collective finish when its
// last flow does, close to what the receivers' ports allow, and do flows with
// few paths finish with the others?
//
//   jain          Jain's index of the completed flows' normalised throughput
//                 (ideal FCT / FCT): 1 when all flows are slowed alike, 1/n
//                 when one flow gets everything.
//   completion    last end - first start of the item's flows (all completed).
//   bound         for each receiver, its flows' bytes over the sum of its
//                 ports' rates (every port busy, nothing else on them), after
//                 the least latency among those flows (links' delays and the
//                 store-and-forward of a last frame: nothing arrives sooner);
//                 the largest over the item's receivers. Each flow's latency
//                 is not added again: a sum of ideal FCTs would, and ran 4%
//                 above this on the Dragonfly in-cast (143 flows of 1 MiB).
//                 Meant for collectives: for a Poisson item it is far below
//                 the completion time. Counts host bytes: no transport
//                 reaches it, as each adds headers.
//   wire bound    the same over the bytes the flows' first transmissions took
//                 on the wire (their latency from simulation::ideal_wire_fct):
//                 what the transport as it is could reach. Known once every
//                 flow of the item completed.
//   slowest       the flow with the largest FCT (its FCT is the item's
//                 fct_us.max in results.hpp).
//   by_paths      the flows grouped by their number of candidate paths (the
//                 sender's PST row; 0 where the scheme builds none).

#include "fabric/simulation.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace laps::fabric {

struct path_count_group {
    std::uint32_t paths = 0;
    std::size_t flows = 0;      // completed flows in the group
    double mean_fct_us = 0;
    double max_fct_us = 0;
};

// Beside the item's counts and FCT distribution (results.hpp traffic_summary).
struct fairness_summary {
    double jain = 0;            // over the completed flows (0 when none)
    time_ns completion_ns = -1; // -1 while a flow is incomplete
    time_ns bound_ns = 0;
    double bound_ratio = 0;     // completion / bound (0 while incomplete)
    time_ns wire_bound_ns = 0;  // 0 while incomplete
    double wire_bound_ratio = 0; // completion / wire bound (0 while incomplete)
    std::string slowest;        // "src->dst"
    std::vector<path_count_group> by_paths; // ascending paths
};

// Jain's fairness index (sum x)^2 / (n sum x^2); 0 for no values.
double jain_index(std::span<const double> x) noexcept;

// One per traffic item of the scenario.
std::vector<fairness_summary> summarize_fairness(const simulation& sim);

} // namespace laps::fabric
