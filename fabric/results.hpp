#pragma once
// What a run measured, and the files it writes (docs/testbed.md, Outputs):
//   flows.csv    one row per flow: size, start, FCT, ideal FCT, wire bound, slowdown, resends
//   paths.csv    per source host and candidate path: DATA packets sent on it
//   links.csv    per link direction: traffic, utilisation, queues, drops by reason
//   reorder.csv  receivers' reorder-buffer occupancy seen by each DATA arrival (Fig. 20)
//   summary.json the numbers below, machine-readable
// and a table on stdout. No wall-clock values anywhere: equal runs, equal bytes.
//
// Ideal FCT: the flow's host frames at the sender's host rate, plus the
// shortest path's propagation and the last frame's store-and-forward over
// its remaining links (an idle fabric, no LAPS header). Slowdown = FCT /
// ideal. Multi-homed hosts (rail GPUs) can beat it by spraying over both links.
// Wire bound (ideal_wire_fct_ns): the same for the bytes the flow's first
// transmissions took on the wire as its transport sent them (LAPS's
// encapsulation, the RoCE NIC's headers), resends left out: what the
// transport could reach on an idle fabric.
//
// Path classes (Fig. 19): candidate paths grouped by length in links, L1
// shortest. Per class: traffic share, and that share normalised to uniform
// spraying: sum over (sender, receiver) pairs of the class's packets divided
// by the sum over pairs of (the pair's packets x the class's fraction of the
// pair's candidates). Above 1: the class carries more than uniform spraying
// over the same candidates would give it.

#include "fabric/fairness.hpp"
#include "fabric/hosts/roce_nic.hpp"
#include "fabric/simulation.hpp"
#include "pipeline/counters.hpp"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace laps::fabric {

struct distribution {
    std::size_t count = 0;
    double mean = 0;
    double p50 = 0;
    double p99 = 0;
    double max = 0;
};

// Nearest-rank percentiles of `values` (sorted in place).
distribution describe(std::vector<double>& values);

struct path_class {
    std::uint32_t hops = 0;
    std::uint32_t paths = 0;         // candidate paths of this length, over all pairs with traffic
    std::uint64_t packets = 0;
    double share = 0;                // of all DATA packets
    double normalized = 0;           // share / share under uniform spraying
};

struct traffic_summary {
    std::string label;
    std::size_t flows = 0;
    std::size_t completed = 0;
    distribution fct_us;
    distribution slowdown;
    fairness_summary fairness; // fabric/fairness.hpp
};

// What ran: the scenario, its fabric, the scheme.
struct run_info {
    std::string scenario;
    std::string file;
    std::string description;
    std::uint64_t seed = 0;
    double scale = 1;
    double load_override = 0; // --load, 0 when the scenario's loads apply
    std::string topology;
    std::string family; // rail, dragonfly, leaf_spine, fat_tree, custom
    std::size_t hosts = 0;
    std::size_t switches = 0;
    std::size_t links = 0;
    std::string policy;
    std::string cc; // congestion.cc of the laps scheme: paper | fair
    bool coupled_paths = false; // fair with congestion.fair.coupled_paths
    time_ns timeout_floor_ns = 0; // the laps engines' path-timeout floor (path_timeout_floor)
    bool pfc = false;
    std::string scheme; // its registry name (fabric/schemes/registry.hpp)
    bool roce = false;  // hosts ran the RoCE NIC model
};

struct run_time {
    time_ns end_ns = 0;     // last flow completed (or the run's end)
    time_ns stopped_ns = 0; // virtual time the run stopped
    std::uint64_t events = 0;
};

// Receivers' reorder-buffer occupancy seen by each DATA arrival (Fig. 20).
struct reorder_summary {
    std::vector<std::uint64_t> histogram; // frames held, summed over receivers (the last bin: or more)
    double mean = 0;
    std::uint64_t p99 = 0;
    std::uint64_t max = 0; // engines' reorder_held_max
};

struct queue_summary {
    std::uint64_t max_switch_queue_bytes = 0;
    std::uint64_t max_switch_buffer_bytes = 0;
    std::uint64_t max_host_queue_bytes = 0;
    std::uint64_t switch_queue_limit = 0;
    std::uint64_t pfc_pauses = 0;
    std::uint64_t pfc_paused_at_end = 0; // ports still paused when the run stopped (a PFC deadlock?)
};

// Times the LAPS hosts waited for room.
struct host_waits {
    std::uint64_t frame_pool = 0; // host-frame mbufs
    std::uint64_t flow_table = 0; // engine flow-table slots
};

struct run_summary {
    run_info run;

    std::size_t flows = 0;
    std::size_t completed = 0;
    std::uint64_t bytes_offered = 0;
    std::uint64_t bytes_delivered = 0;
    std::uint64_t host_duplicates = 0; // frames a host got twice (must be 0)
    distribution fct_us;
    distribution slowdown;
    std::vector<traffic_summary> traffic;
    run_time time;

    drop_table drops{};
    std::uint64_t data_dropped = 0; // DATA the fabric dropped: the true losses
    std::uint64_t acks_dropped = 0; // ACKs it dropped (each costs one resend)
    std::uint64_t retransmissions = 0;
    std::uint64_t spurious = 0;     // resends the receiver already had (duplicates)

    pipeline::engine_counters engines{}; // summed over hosts
    std::vector<path_class> classes;
    reorder_summary reorder;
    queue_summary queues;
    host_waits waits;
    std::vector<std::pair<time_ns, std::string>> faults;
    std::vector<pool_usage> pools; // after release(): in_use must be 0
    hosts::roce_counters roce_totals{}; // the RoCE NICs' counters (zero under laps)
    // The schemes' counters, every scheme's (schemes::counter_report), and
    // the scheme's own line for the summary table.
    std::vector<std::pair<std::string_view, std::uint64_t>> scheme_counters;
    std::string scheme_note;

    // Scheme counter `name`; throws std::out_of_range for a name no scheme has.
    std::uint64_t scheme_counter(std::string_view name) const;
};

// Needs the engines: call before simulation::release().
run_summary summarize(const simulation& sim);

// `v` with `decimals` digits after the point, as the files and the table print it.
std::string fixed(double v, int decimals);
// ns as us.
constexpr double us(time_ns t) noexcept
{
    return static_cast<double>(t) / 1e3;
}

// results_csv.cpp, results_json.cpp, summary_table.cpp.
void write_flows_csv(std::ostream& out, const simulation& sim);
void write_paths_csv(std::ostream& out, const simulation& sim); // needs the engines
void write_links_csv(std::ostream& out, const simulation& sim);
void write_reorder_csv(std::ostream& out, const run_summary& s);
void write_summary_json(std::ostream& out, const run_summary& s);
void print_summary(std::ostream& out, const run_summary& s);

// All of the above into `dir` (created if needed), summary table to `table`.
// Releases the simulation; returns the summary with pool usage filled in.
run_summary write_results(simulation& sim, const std::string& dir, std::ostream* table);

} // namespace laps::fabric
