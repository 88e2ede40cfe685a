#pragma once
// Per-worker counters of the shell (the engine has its own, pipeline/counters.hpp),
// and the snapshot a worker publishes for the control lcore.
//
// Who writes what: a worker writes its own worker_counters (plain fields, its
// lcore only) and publishes them, with its engine's counters, into its
// published_stats every millisecond with relaxed atomic stores. The control
// lcore only reads published_stats, and sums workers on read. After the
// workers have stopped (rte_eal_wait_lcore), the control lcore reads the
// engines directly for the final figures.

#include "common/counter_info.hpp"
#include "pipeline/counters.hpp"
#include "wire/mbuf_encap.hpp"
#include "wire/parse.hpp"

#include <rte_common.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace laps::app {

#define LAPS_WORKER_COUNTERS(X)                                                                                        \
    X(rx_host, "host frames this worker received for its engine (port queue or dispatch ring)")                                  \
    X(rx_fabric, "fabric packets this worker received for its engine (port queue or dispatch ring)")                             \
    X(tx_host, "frames queued for the host port")                                                                     \
    X(tx_fabric, "packets queued for the fabric port")                                                                \
    X(tx_drop_host, "frames the host port did not accept (TX queue full) after tx_host_retried's tries: freed")      \
    X(tx_host_retried, "frames the host port refused once and took on a retry (their DATA was ACKed already)")        \
    X(tx_drop_fabric, "packets the fabric port did not accept (TX queue full): freed")                               \
    X(tx_stamped, "DATA and PROBE packets stamped with the clock immediately before their TX burst")                  \
    X(dispatch_host_out, "host frames this worker handed to another worker (software dispatch)")                      \
    X(dispatch_fabric_out, "fabric packets this worker handed to another worker (software dispatch)")                 \
    X(dispatch_drop_full, "packets dropped because another worker's dispatch ring was full")                          \
    X(backpressure_polls, "iterations that ended with host frames the engine had not taken (a full flow's) in the backlog")           \
    X(backlog_offers_skipped, "iterations with frames the engine had refused and nothing to offer: their flows had not made room for half a queue of them") \
    X(stop_drop_backlog, "host frames still waiting for the engine when the worker stopped: freed")                   \
    X(loops, "iterations of the worker loop")                                                                         \
    X(busy_loops, "iterations that received or sent at least one packet")

struct worker_counters {
#define LAPS_WORKER_COUNTER_FIELD(name, help) std::uint64_t name = 0;
    LAPS_WORKER_COUNTERS(LAPS_WORKER_COUNTER_FIELD)
#undef LAPS_WORKER_COUNTER_FIELD
};

inline constexpr std::array worker_counter_list{
#define LAPS_WORKER_COUNTER_INFO(name, help) common::counter_info<worker_counters>{#name, help, &worker_counters::name},
    LAPS_WORKER_COUNTERS(LAPS_WORKER_COUNTER_INFO)
#undef LAPS_WORKER_COUNTER_INFO
};

// Paths whose per-pid DATA count a worker publishes live (the first ones of
// the PST); the final report reads every pid from the engines.
inline constexpr std::size_t published_paths = 64;

// Dataplane: wo (one worker). Control plane: ro.
struct alignas(RTE_CACHE_LINE_SIZE) published_stats {
    std::array<std::atomic<std::uint64_t>, pipeline::engine_counter_list.size()> engine{};
    std::array<std::atomic<std::uint64_t>, worker_counter_list.size()> worker{};
    std::array<std::atomic<std::uint64_t>, wire::parse_error_count> parse{};
    std::array<std::atomic<std::uint64_t>, published_paths> per_path{};
    // Latencies recorded per tracked path and their minimum (ns; INT64_MAX:
    // none yet): the control lcore checks baseVal against them.
    std::array<std::atomic<std::uint64_t>, published_paths> per_path_samples{};
    std::array<std::atomic<std::int64_t>, published_paths> per_path_latency_min{};
    // Also stored on every busy iteration, for the run's stop conditions.
    alignas(RTE_CACHE_LINE_SIZE) std::atomic<std::uint64_t> host_taken{0};
    std::atomic<std::uint64_t> fabric_received{0};
    std::atomic<bool> running{false};
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "per-lcore counters need lock-free 64-bit atomics");

} // namespace laps::app
