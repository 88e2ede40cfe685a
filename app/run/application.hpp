#pragma once
// The process: instances, the optional link, and the control lcore (the EAL
// main lcore), which runs shared timers (rte_timer: periodic stats), the
// control pollers (the console will be one), the stop conditions and signals.
//
//   build (lcores checked, pools, ports, engines) -> launch lcores ->
//   control loop until a stop condition -> stop flag -> workers drain and
//   return -> final report -> close (engines, rules, ports, rings) ->
//   mbufs in use per pool (must be 0) -> pools freed

#include "app/control/baseline_watch.hpp"
#include "app/control/capture.hpp"
#include "app/run/clock.hpp"
#include "app/config/config.hpp"
#include "app/control/console_backend.hpp"
#include "app/control/metrics_server.hpp"
#include "app/control/telemetry.hpp"
#include "console/console.hpp"
#include "app/run/instance.hpp"
#include "app/link/link.hpp"
#include "app/config/options.hpp"
#include "app/control/stats.hpp"

#include <rte_timer.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace laps::app {

class application {
public:
    // Throws startup_error naming the problem.
    application(app_config config, options opts);
    ~application();
    application(const application&) = delete;
    application& operator=(const application&) = delete;

    // Something else the control lcore calls on every turn.
    void add_poller(std::function<void()> poll) { _pollers.push_back(std::move(poll)); }

    // Runs to a stop condition; returns the number of mbufs not back in their
    // pools at the end (0 when all is well).
    unsigned run();

private:
    void assign_lcores();
    std::string stop_reason(common::time_ns start, common::time_ns now);
    static void on_stats_timer(rte_timer* timer, void* self);
    unsigned close_and_check();

    app_config _config;
    options _options;
    clock _clock{_options.clock_ahead_ns};
    std::atomic<bool> _stop{false};
    std::atomic<bool> _paused{false}; // console stop/start
    std::atomic<bool> _quit{false};   // console quit
    std::vector<std::vector<unsigned>> _worker_lcores; // per instance
    unsigned _link_lcore = 0;
    // Before the instances: workers tap it until they are gone.
    capture _capture;
    std::vector<std::unique_ptr<instance>> _instances;
    std::unique_ptr<link> _link;
    // After the instances: destroyed first, and reset before they close.
    std::unique_ptr<console_backend> _backend;
    std::unique_ptr<console::console> _console;
    std::unique_ptr<telemetry> _telemetry;
    std::unique_ptr<metrics_server> _metrics; // its thread reads the instances
    std::vector<std::function<void()>> _pollers;
    rte_timer _stats_timer{};
    std::vector<live_sample> _last_samples;
    common::time_ns _last_activity = 0;
    std::uint64_t _last_received = 0;
    std::uint64_t _backpressure_at_activity = 0;
    // Each instance's paths' baseVal against what they measure, every 100 ms.
    static constexpr common::time_ns baseline_check_ns = 100 * common::ns_per_ms;
    std::vector<std::unique_ptr<baseline_watch>> _baselines;
    common::time_ns _baselines_checked = 0;
};

} // namespace laps::app
