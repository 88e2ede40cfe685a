// laps-testbed: runs a scenario (configs/scenarios/*.yaml) on an emulated
// fabric of LAPS engines in virtual time and writes its results.
//
//   laps-testbed --scenario configs/scenarios/rail_llm_allreduce.yaml [--scheme NAME] [--seed S]
//                [--scale X] [--out DIR] [--progress] [--quiet]
//   laps-testbed --list-schemes        the schemes, one name per line (tools/sweep reads them)
#include "config/reader.hpp"
#include "fabric/eal.hpp"
#include "fabric/progress.hpp"
#include "fabric/results.hpp"
#include "fabric/scenario.hpp"
#include "fabric/schemes/registry.hpp"
#include "fabric/simulation.hpp"
#include "softmax/policy.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

namespace {

constexpr const char* usage_head =
    "usage: laps-testbed --scenario FILE [--scheme NAME] [--seed S] [--scale X] [--load L] [--policy P]\n"
    "                    [--cc paper|fair|credit] [--acks per-packet|coalesced] [--rx-burst-us T] [--pfc on|off]\n"
    "                    [--out DIR] [--progress] [--quiet]\n"
    "       laps-testbed --list-schemes\n"
    "\n"
    "Runs a testbed scenario (docs/testbed.md) in virtual time: switches and links emulated,\n"
    "every host running the scheme's transport (the LAPS engine, or a RoCEv2 NIC model for\n"
    "the baselines). Writes flows.csv, paths.csv, links.csv, reorder.csv and summary.json to\n"
    "DIR (default results/<scenario name>) and prints a summary table.\n"
    "\n"
    "  --scenario FILE  the scenario (YAML)\n"
    "  --scheme NAME    replaces the scenario's scheme (default laps), one of:\n";

constexpr const char* usage_tail =
    "  --seed S         replaces the scenario's seed\n"
    "  --scale X        replaces the scenario's scale (sizes and times)\n"
    "  --load L         replaces the load of every poisson traffic item (0.5 = 50%)\n"
    "  --policy P       replaces selection.policy of the laps scheme: laps, spray, ecmp, fastest,\n"
    "                   reps, hopper, flowbender, selective (the other seeds' policies on the engine)\n"
    "  --cc VARIANT     replaces congestion.cc of the laps scheme: paper (Alg. 2 as published),\n"
    "                   fair (one queueing target for all flows) or credit (receivers pace credits\n"
    "                   to their senders, each port to the flows granted least; docs/congestion.md)\n"
    "  --acks MODE      replaces engine.acks of the laps scheme: per-packet (one ACK per DATA, the\n"
    "                   paper's receiver) or coalesced (one ACK_RUN per flow and path of a receive burst)\n"
    "  --rx-burst-us T  replaces engine.rx_burst_us: receivers take what arrives within T us of a\n"
    "                   first packet as one burst (0: each packet alone)\n"
    "  --pfc on|off     replaces fabric.pfc (lossless fabric)\n"
    "  --out DIR        where to write the results\n"
    "  --progress       progress bar on stderr even when it is not a terminal\n"
    "  --quiet          no progress bar, no summary table\n"
    "  --list-schemes   print the schemes' names, one a line, and exit\n";

std::string usage()
{
    std::string text = usage_head;
    std::size_t width = 0;
    for (const auto& s : laps::fabric::schemes::registry()) {
        width = std::max(width, s.name.size());
    }
    for (const auto& s : laps::fabric::schemes::registry()) {
        std::string name(s.name);
        name.resize(width + 1, ' '); // the longest name still gets a space
        text += "                     " + name + std::string(s.summary) + "\n";
    }
    return text + usage_tail;
}

struct arguments {
    std::string scenario;
    const laps::fabric::schemes::info* scheme = nullptr;
    std::optional<std::uint64_t> seed;
    std::optional<double> scale;
    std::optional<double> load;
    std::optional<laps::softmax::policy> policy;
    std::optional<laps::congestion::cc_variant> cc;
    std::optional<laps::pipeline::ack_mode> acks;
    std::optional<double> rx_burst_us;
    std::optional<bool> pfc;
    std::string out;
    bool progress = false;
    bool quiet = false;
};

[[noreturn]] void bad(const std::string& what)
{
    std::fprintf(stderr, "laps-testbed: %s\n\n%s", what.c_str(), usage().c_str());
    std::exit(2);
}

arguments parse(int argc, char** argv)
{
    arguments a;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                bad(arg + " needs a value");
            }
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage().c_str(), stdout);
            std::exit(0);
        } else if (arg == "--list-schemes") {
            for (const auto& s : laps::fabric::schemes::registry()) {
                std::printf("%.*s\n", static_cast<int>(s.name.size()), s.name.data());
            }
            std::exit(0);
        } else if (arg == "--scenario") {
            a.scenario = next();
        } else if (arg == "--scheme") {
            const auto v = next();
            a.scheme = laps::fabric::schemes::find(v);
            if (a.scheme == nullptr) {
                bad("--scheme: '" + v + "' is not one of: " + laps::fabric::schemes::names());
            }
        } else if (arg == "--seed") {
            const auto v = next();
            char* end = nullptr;
            const unsigned long long s = std::strtoull(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0' || v[0] == '-') {
                bad("--seed: expected a non-negative integer, got '" + v + "'");
            }
            a.seed = s;
        } else if (arg == "--scale") {
            const auto v = next();
            char* end = nullptr;
            const double x = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(x > 0) || x > 1e6) {
                bad("--scale: expected a number in (0, 1e6], got '" + v + "'");
            }
            a.scale = x;
        } else if (arg == "--load") {
            const auto v = next();
            char* end = nullptr;
            const double x = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(x > 0) || x > 4) {
                bad("--load: expected a number in (0, 4], got '" + v + "'");
            }
            a.load = x;
        } else if (arg == "--policy") {
            const auto v = next();
            a.policy = laps::softmax::find_policy(v);
            if (!a.policy) {
                bad("--policy: '" + v + "' is not one of: " +
                    laps::common::joined_names(laps::softmax::policy_registry));
            }
        } else if (arg == "--cc") {
            const auto v = next();
            const auto cc = laps::common::find_named(laps::congestion::cc_variant_names, v);
            if (!cc) {
                bad("--cc: '" + v + "' is not one of: " + laps::common::joined_names(laps::congestion::cc_variant_names));
            }
            a.cc = *cc;
        } else if (arg == "--acks") {
            const auto v = next();
            a.acks = laps::common::find_named(laps::pipeline::ack_mode_names, v);
            if (!a.acks) {
                bad("--acks: '" + v + "' is not one of: " + laps::common::joined_names(laps::pipeline::ack_mode_names));
            }
        } else if (arg == "--rx-burst-us") {
            const auto v = next();
            char* end = nullptr;
            const double x = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(x >= 0) || x > 1e6) {
                bad("--rx-burst-us: expected a number of microseconds in [0, 1e6], got '" + v + "'");
            }
            a.rx_burst_us = x;
        } else if (arg == "--pfc") {
            const auto v = next();
            if (v != "on" && v != "off") {
                bad("--pfc: expected on or off, got '" + v + "'");
            }
            a.pfc = v == "on";
        } else if (arg == "--out") {
            a.out = next();
        } else if (arg == "--progress") {
            a.progress = true;
        } else if (arg == "--quiet") {
            a.quiet = true;
        } else {
            bad("unknown argument '" + arg + "'");
        }
    }
    if (a.scenario.empty()) {
        bad("--scenario is required");
    }
    return a;
}

} // namespace

int main(int argc, char** argv)
{
    using namespace laps::fabric;
    const arguments args = parse(argc, argv);
    scenario s;
    try {
        s = load_scenario(args.scenario);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "laps-testbed: %s\n", e.what());
        return 2;
    }
    // Overrides for comparisons on the same traffic (docs/design.md §1: a
    // researcher compares LAPS with other policies, lossy with lossless fabrics).
    if (args.scheme != nullptr) {
        s.scheme = args.scheme;
    }
    if (args.policy) {
        s.algo.selection.policy = *args.policy;
    }
    if (args.cc) {
        s.algo.congestion.aimd.variant = *args.cc;
    }
    if (args.acks) {
        s.engine.acks = *args.acks;
    }
    if (args.rx_burst_us) {
        s.engine.rx_burst_ns = static_cast<laps::common::time_ns>(*args.rx_burst_us * 1000.0 + 0.5);
    }
    if (args.pfc) {
        s.fabric.pfc = *args.pfc;
    }
    run_options options;
    options.seed = args.seed;
    options.scale = args.scale;
    options.load = args.load;
    const std::string out = args.out.empty() ? "results/" + s.name : args.out;

    int rc = 0;
    try {
        const pool_plan plan = simulation::plan(s, options);
        check_fits(plan);
        start_eal(argv[0], plan.eal_memory_mb);
        progress_bar bar;
        const bool show = !args.quiet && (args.progress || progress_bar::stderr_is_tty());
        if (show) {
            options.progress = [&bar](double fraction, laps::common::time_ns now) { bar.update(fraction, now); };
        }
        const auto wall = std::chrono::steady_clock::now();
        std::uint64_t events = 0;
        {
            simulation sim(s, options);
            sim.run();
            bar.finish();
            const auto summary = write_results(sim, out, args.quiet ? nullptr : &std::cout);
            events = summary.time.events;
            for (const auto& p : summary.pools) {
                if (p.in_use != 0) {
                    std::fprintf(stderr, "laps-testbed: %u mbufs of pool %s not returned\n", p.in_use, p.name.c_str());
                    rc = 1;
                }
            }
        }
        std::cout.flush();
        if (!args.quiet) {
            // The testbed's speed: events per wall-clock second, setup and output included.
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
            std::fprintf(stderr, "results in %s/ (%.1f s wall, %.0f events/s)\n", out.c_str(), seconds,
                         seconds > 0 ? static_cast<double>(events) / seconds : 0.0);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "laps-testbed: %s\n", e.what());
        rc = 1;
    }
    stop_eal();
    return rc;
}
