#pragma once
// A testbed scenario: the fabric, the LAPS parameters, the traffic and the
// faults of one experiment, read from YAML (docs/testbed.md). Errors name
// file:line:col and the key; unknown keys are errors.
//
// Sizes and times are stored as written; the simulation applies `scale`
// (which --scale replaces): it multiplies LLM message sizes, explicit flow
// sizes, Poisson durations (so flow counts), start times, fault times and
// run.max_time, so a scaled scenario is the same experiment shrunk.

#include "common/names.hpp"
#include "config/laps_config.hpp"
#include "fabric/flow.hpp"
#include "fabric/hosts/roce_params.hpp"
#include "fabric/schemes/parameters.hpp"
#include "fabric/schemes/registry.hpp"
#include "fabric/workload.hpp"
#include "pipeline/engine_config.hpp"
#include "topology/candidates.hpp"
#include "topology/model.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace laps::fabric {

// ECN marking at switch egress (RED: mark with probability 0 below kmin,
// rising to pmax at kmax, 1 above; on dequeue, as the artefacts' switch MMU).
enum class ecn_mode : std::uint8_t {
    automatic, // on for the RoCE schemes (DCQCN and DCTCP need it), off for laps
    on,
    off,
};

inline constexpr std::array ecn_mode_names{
    common::named<ecn_mode>{"auto", ecn_mode::automatic},
    common::named<ecn_mode>{"on", ecn_mode::on},
    common::named<ecn_mode>{"off", ecn_mode::off},
};

struct fabric_params {
    std::uint64_t port_queue_bytes = 150'000;        // DropTail per switch port and class (§IV-A)
    std::uint64_t shared_buffer_bytes = 32'000'000;  // per switch (§IV-A)
    std::uint64_t ecn_threshold_bytes = 0;           // CE-mark ECT packets above it; 0: never
    std::uint64_t host_queue_bytes = 0;              // per host port; 0: no limit (NIC backpressure)
    std::uint32_t frame_bytes = 1024;                // host frame size (the paper's 1 KB packets)
    std::uint32_t memory_mb = 0;                     // mbuf pools; 0: sized from the traffic
    // PFC (lossless Ethernet, the paper's default for the fabric): a switch
    // pauses the upstream port whose buffered data exceeds xoff, resumes it
    // below xon; data queues then never drop (DropTail applies to ACKs only).
    bool pfc = false;
    std::uint64_t pfc_xoff_bytes = 100'000;
    std::uint64_t pfc_xon_bytes = 0; // 0: xoff minus two full packets
    // RED thresholds at 100 Gb/s, scaled with each port's rate (the
    // baselines' artefact, run.py: kmin 100 KB, kmax 400 KB, pmax 0.2; the
    // LAPS authors' CONFIG_DCQCN.txt: 400/1600 KB).
    ecn_mode ecn = ecn_mode::automatic;
    std::uint64_t red_kmin_bytes = 100'000;
    std::uint64_t red_kmax_bytes = 400'000;
    double red_pmax = 0.2;
};

struct engine_params {
    bool in_order = true;                      // reorder buffer on (RDMA-like delivery, Fig. 20)
    pipeline::ack_mode acks = pipeline::ack_mode::per_packet; // ACK per DATA, or coalesced per burst run
    // A receiving engine takes what arrives within this long of a first
    // packet as one burst, as a polling NIC driver does; 0: each packet
    // alone, the moment it arrives.
    time_ns rx_burst_ns = 0;
    std::uint32_t flow_queue_packets = 32;
    time_ns flow_idle_ns = 2 * common::ns_per_ms; // receivers keep flows 4x this
    std::uint32_t poll_budget = 256;
    time_ns housekeeping_ns = 100 * common::ns_per_us; // idle engines are polled this often (flow aging)
};

struct clock_params {
    // Every host clock reads virtual time + epoch + its offset: t = 0 is
    // nothing special to an engine, and offsets never make a clock negative.
    time_ns epoch_ns = common::ns_per_s;
    // Offsets uniform in [-max, +max], one per host, from the seed.
    time_ns offset_max_ns = 0;
    // Rate errors uniform in [-max, +max] ppm, one per host, from the seed:
    // a host's clock gains drift_ppm x 1e-6 ns per virtual ns (real
    // oscillators are within +-100 ppm; docs/design.md §3, unsynchronised clocks).
    double drift_max_ppm = 0;
    // Steps: at virtual time `at_ns` host `host`'s clock jumps by `step_ns`
    // (negative: set back), as a PTP correction or an NTP step would.
    struct step {
        topology::node_id host = 0;
        time_ns at_ns = 0;
        time_ns step_ns = 0;
    };
    std::vector<step> steps;
};

enum class llm_pattern : std::uint8_t { all2all, allreduce, allscatter, permutation };
inline constexpr std::array llm_pattern_names{
    common::named<llm_pattern>{"all2all", llm_pattern::all2all},
    common::named<llm_pattern>{"allreduce", llm_pattern::allreduce},
    common::named<llm_pattern>{"allscatter", llm_pattern::allscatter},
    common::named<llm_pattern>{"permutation", llm_pattern::permutation},
};
constexpr std::string_view to_string(llm_pattern p) noexcept
{
    return common::name_of(llm_pattern_names, p, "?");
}

struct poisson_traffic {
    std::shared_ptr<const flow_size_cdf> sizes;
    double load = 0.5;            // of each sender's host link rate
    time_ns start_ns = 0;
    time_ns duration_ns = 0;
    // Sender -> receivers it picks from uniformly; empty: all to all.
    std::vector<std::pair<topology::node_id, topology::node_id>> pairs;
};

struct llm_traffic {
    llm_pattern pattern = llm_pattern::allreduce;
    std::uint64_t message_bytes = 64ull << 20; // LLaMA-2 7B gradient exchange, 64 MB
    topology::node_id root = 0;                // AllReduce receiver, AllScatter sender
    std::vector<topology::node_id> hosts;      // participants; empty: every host
    time_ns start_ns = 0;
    // 0: every flow starts at start_ns. Else the flows start as a Poisson
    // process of rate n / this window after start_ns (the LAPS authors'
    // artefact spreads its LLM flows over the first 10 ms this way).
    time_ns poisson_starts_ns = 0;
};

struct traffic_item {
    enum class kind : std::uint8_t { poisson, llm, flows } type = kind::flows;
    std::string label; // "traffic[0] (llm allreduce)"
    poisson_traffic poisson;
    llm_traffic llm;
    std::vector<flow_spec> flows;
};

enum class fault_action : std::uint8_t { down, up, blackhole, restore, loss, corruption };
inline constexpr std::array fault_action_names{
    common::named<fault_action>{"down", fault_action::down},
    common::named<fault_action>{"up", fault_action::up},
    common::named<fault_action>{"blackhole", fault_action::blackhole},
    common::named<fault_action>{"restore", fault_action::restore},
    common::named<fault_action>{"loss", fault_action::loss},
    common::named<fault_action>{"corruption", fault_action::corruption},
};
constexpr std::string_view to_string(fault_action a) noexcept
{
    return common::name_of(fault_action_names, a, "?");
}

struct fault_spec {
    time_ns at_ns = 0;
    fault_action action = fault_action::down;
    bool all_links = false;
    topology::link_id link = 0;
    bool forward = true; // a -> b as written
    bool reverse = true; // b -> a
    double probability = 0; // loss, corruption
    std::string label;
};

struct scenario {
    std::string file;
    std::string name;
    std::string description;
    std::uint64_t seed = 1;
    double scale = 1.0;

    std::string topology_label;
    std::shared_ptr<const topology::fabric> topology;
    topology::path_options paths;

    // selection, congestion, retransmit, tables, baseval: as in a laps config file.
    config::laps_config algo;
    bool rate_cap_given = false;      // else: each host's link rate
    bool flow_capacity_given = false; // else: 256 per engine
    // else, on a lossless (PFC) fabric: the path timeout's floor is the RoCE
    // NICs' retransmission timeout (roce.irn_rto_high_us), docs/testbed.md.
    bool min_timeout_given = false;

    // The load-balancing scheme (its registry row); --scheme replaces it.
    const schemes::info* scheme = &schemes::default_scheme();
    hosts::roce_params roce;         // the RoCE NIC model's parameters (`roce:`)
    schemes::parameters scheme_params; // the schemes' own sections (`roce.<key>`)

    fabric_params fabric;
    engine_params engine;
    clock_params clocks;
    std::vector<traffic_item> traffic;
    std::vector<fault_spec> faults;
    time_ns max_time_ns = 2 * common::ns_per_s;
};

// Throws config::config_error ("file:line:col: key: what").
scenario load_scenario(const std::string& path);
// `base_dir`: where relative paths (topology, workloads) are resolved.
scenario parse_scenario(const std::string& yaml, const std::string& name, const std::string& base_dir);

// The floor of LAPS's path timeout the engines run with: retransmit.min_timeout_us,
// or on a lossless (PFC) fabric where the scenario does not set it, at least the
// RoCE NICs' roce.irn_rto_high_us (docs/testbed.md).
time_ns path_timeout_floor(const scenario& s) noexcept;

} // namespace laps::fabric
