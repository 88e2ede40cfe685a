#pragma once
// What the app prints: a periodic line per instance (stats.interval_ms), and
// the final report at exit, one "name: value" per line so that scripts can
// read it:
//
//   laps.run.seconds: 1.002
//   laps.engine.host_rx: 120          (engine counters, summed over workers)
//   laps.worker0.rx_host: 120         (the shell's per-worker counters)
//   laps.parse.parse_truncated_laps: 1
//   laps.path.1.data_sent: 60         (DATA per pid)
//   laps.port.host.ipackets: 120      (rte_eth_stats of each port)
//   laps.mempool.laps_pkt.in_use: 0

#include "app/run/instance.hpp"
#include "app/link/link.hpp"

#include <cstdint>
#include <vector>

namespace laps::app {

// Live figures of an instance, for the periodic line and its rates.
struct live_sample {
    common::time_ns at = 0;
    std::uint64_t host_rx = 0;
    std::uint64_t fabric_rx = 0;
    std::uint64_t data_sent = 0;
    std::uint64_t data_delivered = 0;
    std::vector<std::uint64_t> per_path;
};

live_sample sample(const instance& inst, common::time_ns now);
void print_periodic(const instance& inst, const live_sample& before, const live_sample& now);

// After the workers returned, before the instance is closed.
void print_final(const instance& inst, double seconds);
void print_link(const link& l);

} // namespace laps::app
