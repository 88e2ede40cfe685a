#pragma once
// DPDK telemetry endpoints (docs/telemetry.md), read with dpdk-telemetry.py:
//   /laps/stats   engine counters summed over workers, and port counters
//   /laps/paths   per path: packets, bytes, share, realVal, baseVal, probes, losses
//   /laps/pst     destinations and their pids          (param: first row index)
//   /laps/pit     paths                                (param: first pid)
//   /laps/flows   active flows                         (param: how many, <= 32)
//   /laps/config  the running configuration
// Telemetry answers from its own thread; the data comes from the workers'
// snapshots (inspect.hpp), so nothing on the data path locks.

#include "app/config.hpp"
#include "app/instance.hpp"

#include <memory>
#include <vector>

namespace laps::app {

class telemetry {
public:
    telemetry(const app_config& config, std::vector<std::unique_ptr<instance>>& instances);
    ~telemetry();
    telemetry(const telemetry&) = delete;
    telemetry& operator=(const telemetry&) = delete;

    const app_config& config() const noexcept { return _config; }
    std::vector<std::unique_ptr<instance>>& instances() noexcept { return _instances; }

private:
    const app_config& _config;
    std::vector<std::unique_ptr<instance>>& _instances;
};

} // namespace laps::app
