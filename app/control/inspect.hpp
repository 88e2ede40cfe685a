#pragma once
// What the console (text) and telemetry (JSON) show, as plain snapshots.
// Per-worker state (flows, counters) is taken on each worker by the worker
// itself (control_channel), so it is consistent and the data path never
// locks; the shared tables are read directly (atomics; the PST under the
// tables' control mutex, which only the control plane takes). One formatter
// per consumer.

#include "app/run/instance.hpp"
#include "pipeline/counters.hpp"
#include "tables/address.hpp"
#include "wire/classify.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace laps::app {

// "3,5,8": numbers (pids, anchors) as the console and telemetry list them.
std::string comma_joined(const auto& numbers)
{
    std::string s;
    for (const auto n : numbers) {
        if (!s.empty()) {
            s += ',';
        }
        s += std::to_string(n);
    }
    return s;
}

struct pst_view {
    tables::address destination;
    std::uint32_t fabric_ipv4 = 0;
    std::vector<tables::path_id> pids;
};

struct pit_view {
    tables::path_id pid = 0;
    std::optional<tables::address> destination; // none: serves no destination
    bool valid = false;
    std::int64_t base_ns = 0;
    std::int64_t uncongested_ns = 0;
    std::int64_t real_ns = 0;     // the shared PIT entry's
    std::int64_t measured_at = 0; // the clock of the worker that measured it
    std::uint8_t hops = 0;
    std::vector<std::uint32_t> anchors;
};

struct path_stats_view {
    tables::path_id pid = 0;
    bool valid = false;
    std::uint64_t packets = 0; // DATA, all workers
    std::uint64_t bytes = 0;
    std::uint64_t probes = 0;
    std::uint64_t losses = 0;
    double share = 0.0;        // of this instance's DATA
    std::int64_t real_ns = 0;  // the shared PIT entry's
    std::int64_t base_ns = 0;
};

struct flow_view {
    std::uint16_t worker = 0;
    std::uint32_t flow_id = 0;
    wire::flow_key key{};
    double rate_bps = 0;
    double expected_bps = 0;
    std::uint32_t in_flight = 0;
    std::uint32_t queued = 0;
    std::uint32_t lost_pending = 0;
};

struct engine_view {
    pipeline::engine_counters counters{};   // summed over workers (reorder_held_max: max)
    std::vector<std::uint64_t> parse_errors; // by wire::parse_error
    std::uint32_t flows = 0;
    std::uint32_t receive_flows = 0;
};

struct selection_view {
    softmax::selector_params selection;
    std::uint32_t increase_stages = 0;
    congestion::cc_variant cc = congestion::cc_variant::paper;
    std::size_t destinations = 0;
    std::size_t paths = 0;
};

// Destinations in PST order (set index).
std::vector<pst_view> inspect_pst(instance& inst);
std::vector<pit_view> inspect_pit(instance& inst);
std::vector<path_stats_view> inspect_paths(instance& inst);
std::vector<flow_view> inspect_flows(instance& inst, std::uint32_t max);
engine_view inspect_engine(instance& inst);
selection_view inspect_selection(instance& inst);

// "10.0.0.1:1000 -> 10.0.0.2:5000 udp" / "... rocev2 qp 0x00abcd"
std::string describe(const wire::flow_key& key);

} // namespace laps::app
