#pragma once
// DPDK telemetry endpoints (docs/telemetry.md), read with dpdk-telemetry.py:
//   /laps/stats   engine counters summed over workers, and port counters
//   /laps/paths   per path: packets, bytes, share, realVal, baseVal, probes, losses
//   /laps/pst     destinations and their pids          (param: first row index)
//   /laps/pit     paths                                (param: first pid)
//   /laps/flows   active flows                         (param: how many, <= 24)
//   /laps/config  the running configuration
// Parameters are comma-separated: a number (as above) and, with several
// instances, an instance name to show only that one. A bad parameter gets
// {"error": "..."}. With several instances every key is "<instance>/<key>"
// (DPDK 22.11 accepts only [A-Za-z0-9_/] in dictionary keys).
// Telemetry answers from its own thread; the data comes from the workers'
// snapshots (inspect.hpp), so nothing on the data path locks. Every add to a
// reply is checked; the first failure of each endpoint is logged once.

#include "app/config/config.hpp"
#include "app/run/instance.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
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

// The parameters of one request, checked (exposed for the unit test).
struct telemetry_params {
    std::optional<std::string> instance; // show only this one
    std::optional<std::uint64_t> number; // first row / pid, or how many flows
};

// Parses "5", "a", "a,5", "5,a" (instance names from `names`); throws
// std::invalid_argument with a message for the reply's "error".
telemetry_params parse_telemetry_params(const char* params, const std::vector<std::string>& names,
                                        bool number_allowed, const char* number_means);

// "key" with one instance, "<instance>/key" with several.
std::string telemetry_key(bool several, const std::string& instance, const std::string& key);

} // namespace laps::app
