// laps-paths: candidate paths, anchors and baseVal for every host of a fabric,
// as LAPS tables (YAML) or a summary. Usage: laps-paths --help.

#include "topology/candidates.hpp"
#include "topology/export.hpp"
#include "topology/summary.hpp"
#include "topology/yaml_io.hpp"

#include <tbb/global_control.h>

#include <charconv>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace laps::topology;

constexpr const char* usage = R"(usage: laps-paths --topology <file.yaml | builder[:key=value,...]> [options]

Computes each host's LAPS tables (PST: destination -> candidate paths; PIT: path
-> anchors, baseVal) for a fabric, and prints a summary or writes the tables.

  --topology T        a topology file (docs/topology.md) or a builder:
                        rail[:clusters=8,gpus=8,...]
                        dragonfly[:groups=9,switches_per_group=4,hosts_per_switch=4,global_links=2,...]
                        leaf_spine[:leaves=4,spines=2,hosts_per_leaf=4,uplink_rates_gbps=10/10/1,...]
                        fat_tree[:k=4,rate_gbps=100,delay_ns=1000]
  --host H            one source host: node id, name or address (default: all hosts)
  --summary           print a YAML summary (the default when nothing else is asked)
  --export FILE       write the tables of --host to FILE ('-' for stdout); without
                      --host, FILE must contain {host}, replaced by each host id
  --paths P           auto (default: paper for rail and dragonfly, else yen),
                      paper, or yen[:k=8,stretch=2]
  --packet-bytes N    packet size for serialization in baseVal (default 1024)
  --margin M          queueing margin of baseVal: per_switch[:packets] (default,
                      5 packets per forwarding node) or per_link[:packets] (1)
  --threads N         worker threads (default: all cores)
  --write-topology F  write the fabric as an explicit topology file ('-': stdout)
  --help              this text

Exit status: 0 on success, 2 on a bad argument, topology or path.
)";

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct options {
    std::string topology;
    std::optional<std::string> host;
    bool summary = false;
    std::optional<std::string> export_file;
    std::optional<std::string> write_topology;
    path_options paths;
    delay_options delays;
    std::optional<unsigned> threads;
};

unsigned parse_unsigned(const std::string& flag, const std::string& text, unsigned min)
{
    unsigned v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size() || v < min) {
        throw usage_error(flag + ": expected an integer >= " + std::to_string(min) + ", got '" + text + "'");
    }
    return v;
}

options parse(int argc, char** argv)
{
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                throw usage_error(arg + " needs a value");
            }
            return argv[++i];
        };
        if (arg == "--help" || arg == "-h") {
            std::cout << usage;
            std::exit(0);
        } else if (arg == "--topology") {
            o.topology = value();
        } else if (arg == "--host") {
            o.host = value();
        } else if (arg == "--summary") {
            o.summary = true;
        } else if (arg == "--export") {
            o.export_file = value();
        } else if (arg == "--write-topology") {
            o.write_topology = value();
        } else if (arg == "--paths") {
            o.paths = parse_path_options(value());
        } else if (arg == "--packet-bytes") {
            o.delays.packet_bytes = parse_unsigned(arg, value(), 1);
        } else if (arg == "--margin") {
            parse_margin(value(), o.delays);
        } else if (arg == "--threads") {
            o.threads = parse_unsigned(arg, value(), 1);
        } else {
            throw usage_error("unknown argument '" + arg + "' (see --help)");
        }
    }
    if (o.topology.empty()) {
        throw usage_error("--topology is required (see --help)");
    }
    if (o.export_file && !o.host && o.export_file->find("{host}") == std::string::npos) {
        throw usage_error("--export without --host writes one file per host: put {host} in the file name");
    }
    if (!o.export_file && !o.write_topology) {
        o.summary = true;
    }
    return o;
}

node_id resolve_host(const fabric& f, const std::string& text)
{
    node_id id = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (ec == std::errc() && ptr == text.data() + text.size()) {
        if (id >= f.host_count()) {
            throw usage_error("--host " + text + ": the fabric has hosts 0 to " + std::to_string(f.host_count() - 1));
        }
        return id;
    }
    if (const auto n = f.find(text); n && f.is_host(*n)) {
        return *n;
    }
    if (const auto a = laps::tables::address::parse(text)) {
        if (const auto n = f.host_by_address(*a)) {
            return *n;
        }
    }
    throw usage_error("--host " + text + ": no host with that id, name or address");
}

std::string replace_host(std::string pattern, node_id host)
{
    const std::string id = std::to_string(host);
    for (auto at = pattern.find("{host}"); at != std::string::npos; at = pattern.find("{host}", at + id.size())) {
        pattern.replace(at, 6, id);
    }
    return pattern;
}

void write_to(const std::string& file, const std::function<void(std::ostream&)>& write)
{
    if (file == "-") {
        write(std::cout);
        return;
    }
    std::ofstream out(file);
    if (!out) {
        throw usage_error("cannot write '" + file + "'");
    }
    write(out);
    if (!out) {
        throw usage_error("error writing '" + file + "'");
    }
}

std::string number(double v)
{
    if (v == static_cast<double>(static_cast<long long>(v))) {
        return std::to_string(static_cast<long long>(v));
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

int run(const options& o)
{
    std::unique_ptr<tbb::global_control> threads;
    if (o.threads) {
        threads = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, *o.threads);
    }
    const fabric f = open_topology(o.topology);
    if (o.write_topology) {
        write_to(*o.write_topology, [&](std::ostream& out) { write_fabric_yaml(out, f); });
    }
    if (!o.summary && !o.export_file) {
        return 0;
    }

    const routing r(f);
    const path_planner planner(r, o.paths, o.delays);
    std::vector<node_id> sources;
    if (o.host) {
        sources.push_back(resolve_host(f, *o.host));
    } else {
        for (node_id h = 0; h < f.host_count(); ++h) {
            sources.push_back(h);
        }
    }

    table_summary summary;
    std::mutex lock;
    planner.for_each_table(sources, [&](node_id host, const laps::tables::table_spec& spec) {
        if (o.export_file) {
            const std::string file = o.host ? *o.export_file : replace_host(*o.export_file, host);
            const std::string comment =
                "generated by laps-paths --topology " + o.topology + " --host " + std::to_string(host);
            write_to(file, [&](std::ostream& out) { write_table_yaml(out, f, host, spec, comment); });
        }
        const std::lock_guard guard(lock);
        summary.add(spec);
    });

    if (o.summary) {
        std::ostream& out = o.export_file && *o.export_file == "-" ? std::cerr : std::cout;
        const double n = static_cast<double>(summary.tables);
        out << "topology: " << o.topology << "\n";
        out << "family: " << to_string(f.family()) << "\n";
        out << "hosts: " << f.host_count() << "\n";
        out << "switches: " << f.switch_count() << "\n";
        out << "links: " << f.link_count() << "\n";
        out << "paths: " << to_string(path_options{planner.strategy(), o.paths.k, o.paths.stretch}) << "\n";
        if (o.host) {
            out << "host: " << sources.front() << "\n";
        } else {
            out << "tables: " << summary.tables << "  # per-host averages below, histograms summed over hosts\n";
        }
        out << "pst_entries: " << number(static_cast<double>(summary.pst_entries) / n) << "\n";
        out << "pit_entries: " << number(static_cast<double>(summary.pit_entries) / n) << "\n";
        out << "paths_per_destination: ";
        write_histogram(out, summary.paths_per_destination);
        out << "\nhops: ";
        write_histogram(out, summary.hops);
        out << "\nanchors: ";
        write_histogram(out, summary.anchors);
        out << "\n";
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        return run(parse(argc, argv));
    } catch (const usage_error& e) {
        std::cerr << "laps-paths: " << e.what() << "\n";
        return 2;
    } catch (const topology_error& e) {
        std::cerr << "laps-paths: " << e.what() << "\n";
        return 2;
    } catch (const path_error& e) {
        std::cerr << "laps-paths: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "laps-paths: internal error: " << e.what() << "\n";
        return 1;
    }
}
