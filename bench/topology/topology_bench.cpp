// Time and peak memory to compute every host's LAPS tables (candidate paths,
// anchors, baseVal, PST + PIT rows) for a fabric. One scenario per process, so
// that the peak RSS (getrusage ru_maxrss) belongs to that scenario alone.
//
//   topology_bench --topology fat_tree:k=16 --paths yen:k=8,stretch=2 --threads 1 [--hosts N] [--repeat R]
//
// Each repetition starts from a fresh routing (no cached trees). Prints one
// YAML line per scenario: the best and the median wall time of the
// repetitions, and the best CPU time (user + system, all threads), which a
// shared machine disturbs less. bench/topology/run.sh runs the matrix
// reported in docs/performance-topology.md.

#include "topology/candidates.hpp"
#include "topology/yaml_io.hpp"

#include <tbb/global_control.h>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <charconv>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

using namespace laps::topology;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double cpu_seconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

long peak_rss_kib()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss; // KiB on Linux
}

unsigned to_unsigned(const std::string& s)
{
    unsigned v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size()) {
        throw std::runtime_error("expected a number, got '" + s + "'");
    }
    return v;
}

} // namespace

int main(int argc, char** argv)
{
    std::string topology = "dragonfly";
    std::string paths = "yen:k=8,stretch=2";
    unsigned threads = 1;
    unsigned hosts = 0; // 0: all
    unsigned repeat = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const std::string value = argv[i + 1];
        if (flag == "--topology") {
            topology = value;
        } else if (flag == "--paths") {
            paths = value;
        } else if (flag == "--threads") {
            threads = to_unsigned(value);
        } else if (flag == "--hosts") {
            hosts = to_unsigned(value);
        } else if (flag == "--repeat") {
            repeat = std::max(1u, to_unsigned(value));
        } else {
            std::cerr << "usage: topology_bench --topology T --paths P --threads N [--hosts N] [--repeat R]\n";
            return 2;
        }
    }
    try {
        const tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
        const auto start = std::chrono::steady_clock::now();
        const fabric f = open_topology(topology);
        const double build_s = seconds_since(start);
        // The first N hosts, or all of them.
        std::vector<node_id> sources;
        const std::size_t n = hosts == 0 ? f.host_count() : std::min<std::size_t>(hosts, f.host_count());
        for (node_id h = 0; h < n; ++h) {
            sources.push_back(h);
        }
        std::atomic<std::uint64_t> pst_rows = 0;
        std::atomic<std::uint64_t> pit_rows = 0;
        std::vector<double> times;
        std::vector<double> cpu_times;
        for (unsigned i = 0; i < repeat; ++i) {
            pst_rows = 0;
            pit_rows = 0;
            const auto tables_start = std::chrono::steady_clock::now();
            const double cpu_start = cpu_seconds();
            const routing r(f);
            const path_planner planner(r, parse_path_options(paths), {});
            planner.for_each_table(sources, [&](node_id, const laps::tables::table_spec& spec) {
                pst_rows += spec.pst.size();
                pit_rows += spec.pit.size();
            });
            times.push_back(seconds_since(tables_start));
            cpu_times.push_back(cpu_seconds() - cpu_start);
        }
        std::sort(times.begin(), times.end());
        std::sort(cpu_times.begin(), cpu_times.end());
        const double tables_s = times.front();
        const double median_s = times[times.size() / 2];

        std::printf("{topology: \"%s\", paths: \"%s\", threads: %u, hosts: %zu, sources: %zu, switches: %zu, "
                    "links: %zu, pst_rows: %llu, pit_rows: %llu, build_s: %.3f, repeat: %u, tables_s: %.3f, "
                    "median_s: %.3f, cpu_s: %.3f, per_host_ms: %.3f, peak_rss_mib: %.1f}\n",
                    topology.c_str(), to_string(parse_path_options(paths)).c_str(), threads, f.host_count(), n,
                    f.switch_count(), f.link_count(), static_cast<unsigned long long>(pst_rows.load()),
                    static_cast<unsigned long long>(pit_rows.load()), build_s, repeat, tables_s, median_s, cpu_times.front(),
                    1e3 * tables_s / static_cast<double>(n), static_cast<double>(peak_rss_kib()) / 1024.0);
    } catch (const std::exception& e) {
        std::cerr << "topology_bench: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
