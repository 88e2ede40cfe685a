#pragma once
// The LAPS algorithm configuration: parameters of every stage and the path
// tables, read from YAML into plain structs (docs/configuration.md).
//
// The app's config (ports, lcores, ...) embeds these same sections; it reads
// its own sections and hands the rest to parse_laps_sections().

#include "common/names.hpp"
#include "common/time.hpp"
#include "config/reader.hpp"
#include "congestion/aimd.hpp"
#include "softmax/beta.hpp"
#include "policy/flowbender.hpp"
#include "policy/hopper.hpp"
#include "policy/reps.hpp"
#include "softmax/policy.hpp"
#include "softmax/selector.hpp"
#include "tables/path_table.hpp"
#include "tables/table_spec.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace laps::config {

struct host_section {
    std::optional<std::uint32_t> id;              // host index in a topology
    std::optional<tables::address> address;       // this host's address
};

struct selection_section {
    softmax::policy policy = softmax::policy::laps; // softmax/policy.hpp's registry
    softmax::beta_params beta;    // default: normalized, alpha 1
    bool probing = true;          // Alg. 1 lines 5-8
    // Alg. 1 doubles a stale path's realVal at each probe; not beyond this
    // (a path that comes back is probed again within 2 x this).
    common::time_ns probe_backoff_cap_ns = 10 * common::ns_per_ms;
    std::uint64_t seed = 1;       // per-engine generators derive from it
    // The other seeds' policies (docs/pipeline.md "Other policies").
    std::uint16_t reps_cache_size = 8;                      // selection.reps.cache_size
    common::time_ns reps_freeze_ns = common::ns_per_ms;     // selection.reps.freeze_us
    policy::hopper_config hopper;                           // selection.hopper (base and entropies per flow)
    policy::flowbender_config flowbender;                   // selection.flowbender (entropies per flow)
    std::uint64_t elephant_bytes = 1'000'000;               // selection.selective.elephant_bytes
    std::uint64_t elephant_dscp = 0;                        // selection.selective.dscp: bit per DSCP marked elephant
};

struct congestion_section {
    congestion::aimd_params aimd; // N = 5, floor 0.1 Gb/s, cap 100 Gb/s
    std::uint32_t pacer_burst_bytes = 16384;
};

struct retransmit_section {
    std::uint32_t window_packets = 256;   // in flight per flow; also the receiver's duplicate window
    common::time_ns min_timeout_ns = 10'000; // floor of the 2 x realVal path timeout
    // The path timeout is also at least the measured round trip plus four
    // deviations (RFC 6298; retransmit/rto_estimator.hpp). Off: Alg. 3's
    // 2 x realVal alone, as the paper writes it.
    bool rtt_timeout = true;
    // With rtt_timeout, a path's timeout before its first round trip is
    // measured (RFC 6298 §2.1's initial RTO): 0 keeps 2 x realVal. A
    // software fabric on shared cores wants milliseconds here
    // (configs/app-ring.yaml): its first round trips include scheduler slices.
    common::time_ns initial_timeout_ns = 0;
    // The most a path timeout grows by doubling while a flow's resends go
    // unanswered (retransmit.max_timeout_us).
    common::time_ns max_timeout_ns = 100 * common::ns_per_ms;
};

struct tables_section {
    std::uint32_t pst_capacity = 65536;
    std::uint32_t pit_capacity = 65536;   // pids are 16 bits on the wire
    std::uint32_t flow_capacity = 16384;
    bool estimate_clock_offset = true;    // clocks: unsynchronized (default) | synchronized
    tables::clock_offset_params clock_offset; // tables.clock_offset: the estimator (tables/clock_offset.hpp)
    // How far an ACK may move a path's realVal before its shared PIT entry is
    // rewritten (fraction of realVal). Unset: 0 (every ACK) for tables of one
    // worker, 1/32 for tables shared by several (docs/pipeline.md).
    std::optional<double> pit_update_tolerance;
    // The app raises a path's baseVal to its smallest measured latency plus
    // its margin (base_ns - uncongested_ns as configured, else 10% of that
    // latency) when every measurement is above it (docs/app.md "A baseline
    // that matches the ports"). Off: it only warns.
    bool calibrate_base = false;
};

// How baseVal is computed from a topology (topology/).
enum class margin_unit : std::uint8_t { per_switch, per_link };
inline constexpr std::array margin_unit_names{
    common::named<margin_unit>{"switch", margin_unit::per_switch},
    common::named<margin_unit>{"link", margin_unit::per_link},
};
struct baseval_section {
    std::uint32_t packet_bytes = 1024;
    std::uint32_t margin_packets = 5;     // §III-F: five packets per switch
    margin_unit margin_per = margin_unit::per_switch;
};

struct laps_config {
    std::string source; // file name (or a label for inline YAML)
    host_section host;
    selection_section selection;
    congestion_section congestion;
    retransmit_section retransmit;
    tables_section tables;
    baseval_section baseval;
    tables::table_spec paths; // explicit PST/PIT rows (may be empty)
};

// Top-level keys this module reads.
inline constexpr std::string_view laps_sections[] = {"version", "host", "selection", "congestion",
                                                     "retransmit", "tables", "baseval", "paths"};

// Reads the sections above from `doc` (other keys are the caller's business).
void parse_laps_sections(const reader& r, const YAML::Node& doc, laps_config& out);

// The keys of a Hopper or FlowBender section at `key`, into `out`:
// selection.hopper and selection.flowbender here, and the testbed's
// roce.hopper and roce.flowbender, which also take `entropies`.
void parse_hopper_section(const reader& r, const YAML::Node& n, const std::string& key, policy::hopper_config& out,
                          bool entropies = false);
void parse_flowbender_section(const reader& r, const YAML::Node& n, const std::string& key,
                              policy::flowbender_config& out, bool entropies = false);

// A whole file of only these sections: unknown top-level keys are errors.
laps_config load_laps_config_file(const std::string& path);
laps_config load_laps_config_string(const std::string& yaml, const std::string& name = "<inline>");

// The PIT options a config asks for (clocks, the offset estimator, sample
// normalisation at the congestion cap's rate); the caller adds memory and
// the update tolerance.
tables::path_table_options path_options(const laps_config& c);
// The path selection a config asks for (selection: policy, beta, probing,
// seed, REPS's cache).
softmax::selector_params selector_options(const laps_config& c);

} // namespace laps::config
