// laps: the LAPS data path on DPDK ports. Usage: laps --help.
#include "app/run/application.hpp"
#include "app/run/signals.hpp"
#include "app/errors.hpp"
#include "app/config/options.hpp"
#include "config/reader.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_timer.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr int exit_startup = 1;
constexpr int exit_usage = 2;
constexpr int exit_leak = 3;

// EAL for the life of main: rte_eal_cleanup runs last.
class eal {
public:
    eal(int argc, char** argv)
    {
        _consumed = rte_eal_init(argc, argv);
        if (_consumed < 0) {
            throw laps::app::startup_error(std::string("EAL initialisation failed: ") + rte_strerror(rte_errno) +
                                           " (check the EAL arguments before \"--\"; the EAL lines above say more)");
        }
        rte_timer_subsystem_init();
    }
    ~eal()
    {
        rte_timer_subsystem_finalize();
        rte_eal_cleanup();
    }
    eal(const eal&) = delete;
    eal& operator=(const eal&) = delete;
    int consumed() const noexcept { return _consumed; }

private:
    int _consumed = 0;
};

std::vector<std::string> app_arguments(int argc, char** argv)
{
    std::vector<std::string> out;
    int i = 1;
    while (i < argc && std::string(argv[i]) != "--") {
        ++i;
    }
    for (++i; i < argc; ++i) {
        out.emplace_back(argv[i]);
    }
    return out;
}

} // namespace

int main(int argc, char** argv)
{
    using namespace laps::app;
    if (wants_help(argc, argv)) {
        std::fputs(usage_text, stdout);
        return 0;
    }
    options opts;
    app_config config;
    try {
        // The config first: its errors need no EAL and come without EAL noise.
        opts = parse_options(app_arguments(argc, argv));
        config = load_app_config(opts.config);
    } catch (const usage_error& e) {
        std::fprintf(stderr, "laps: %s (see laps --help)\n", e.what());
        return exit_usage;
    } catch (const laps::config::config_error& e) {
        std::fprintf(stderr, "laps: config: %s\n", e.what());
        return exit_usage;
    }
    // Before EAL: a SIGTERM while the ports come up (a TAP takes a while)
    // ends the run as soon as it begins, with its exit report, instead of
    // killing the process with no report (docs/app.md "Stopping").
    const signal_guard signals;
    try {
        const eal env(argc, argv);
        unsigned leaked = 0;
        {
            application app(std::move(config), std::move(opts));
            leaked = app.run();
        }
        return leaked == 0 ? 0 : exit_leak;
    } catch (const startup_error& e) {
        std::fprintf(stderr, "laps: %s\n", e.what());
        return exit_startup;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "laps: %s\n", e.what());
        return exit_startup;
    }
}
