#include "app/control/metrics.hpp"

#include "app/control/inspect.hpp"

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include <array>
#include <cstdio>
#include <span>

namespace laps::app {

namespace {

void escape_into(std::string& out, std::string_view text, bool quote)
{
    for (const char c : text) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '"' && quote) {
            out += "\\\"";
        } else {
            out += c;
        }
    }
}

// Engine and worker counters that count drops go to one family with a
// `reason` label (the counter's name), so that one query sums or splits them.
bool is_drop(std::string_view name)
{
    return name.find("_drop_") != std::string_view::npos;
}

std::string help_of(std::string_view prefix, std::string_view help)
{
    return std::string(prefix) + std::string(help);
}

struct port_ref {
    const instance* inst;
    const port* p;
    const char* role;
};

std::vector<port_ref> ports_of(std::vector<std::unique_ptr<instance>>& instances)
{
    std::vector<port_ref> out;
    for (const auto& i : instances) {
        out.push_back({i.get(), &i->host_port(), "host"});
        out.push_back({i.get(), &i->fabric_port(), "fabric"});
    }
    return out;
}

metric_labels port_labels(const port_ref& r)
{
    return {{"instance", r.inst->name()}, {"port", r.role}, {"port_id", std::to_string(r.p->id())}};
}

void write_ports(metrics_writer& w, std::vector<std::unique_ptr<instance>>& instances)
{
    const auto ports = ports_of(instances);
    std::vector<std::pair<port_ref, rte_eth_stats>> stats;
    for (const auto& r : ports) {
        rte_eth_stats st{};
        if (rte_eth_stats_get(r.p->id(), &st) == 0) {
            stats.emplace_back(r, st);
        }
    }
    struct field {
        const char* name;
        const char* help;
        std::uint64_t rte_eth_stats::*value;
    };
    static constexpr field fields[] = {
        {"laps_port_rx_packets", "Packets received by the port (rte_eth_stats ipackets).", &rte_eth_stats::ipackets},
        {"laps_port_tx_packets", "Packets sent by the port (rte_eth_stats opackets).", &rte_eth_stats::opackets},
        {"laps_port_rx_bytes", "Bytes received by the port (rte_eth_stats ibytes).", &rte_eth_stats::ibytes},
        {"laps_port_tx_bytes", "Bytes sent by the port (rte_eth_stats obytes).", &rte_eth_stats::obytes},
        {"laps_port_rx_missed", "Packets the port dropped for lack of RX descriptors (imissed).",
         &rte_eth_stats::imissed},
        {"laps_port_rx_errors", "Erroneous packets received (ierrors).", &rte_eth_stats::ierrors},
        {"laps_port_tx_errors", "Packets the port failed to send (oerrors).", &rte_eth_stats::oerrors},
        {"laps_port_rx_nombuf", "RX mbuf allocation failures (rx_nombuf).", &rte_eth_stats::rx_nombuf},
    };
    for (const auto& f : fields) {
        w.counter(f.name, f.help);
        for (const auto& [r, st] : stats) {
            w.sample(port_labels(r), st.*f.value);
        }
    }
    // Extended statistics, named by the driver.
    w.counter("laps_port_xstat", "The port's extended statistics (rte_eth_xstats), by driver name.");
    for (const auto& r : ports) {
        const int n = rte_eth_xstats_get(r.p->id(), nullptr, 0);
        if (n <= 0) {
            continue;
        }
        std::vector<rte_eth_xstat> values(static_cast<std::size_t>(n));
        std::vector<rte_eth_xstat_name> names(static_cast<std::size_t>(n));
        if (rte_eth_xstats_get(r.p->id(), values.data(), static_cast<unsigned>(n)) != n ||
            rte_eth_xstats_get_names(r.p->id(), names.data(), static_cast<unsigned>(n)) != n) {
            continue;
        }
        for (const auto& v : values) {
            if (v.id >= names.size()) {
                continue;
            }
            auto labels = port_labels(r);
            labels.emplace_back("xstat", names[v.id].name);
            w.sample(labels, v.value);
        }
    }
}

void write_mempools(metrics_writer& w)
{
    // Collected in a fixed array: the walk holds DPDK's mempool list lock
    // and calls back through C, where nothing may throw.
    struct walked {
        std::array<rte_mempool*, 256> pools{};
        std::size_t n = 0;
    } found;
    rte_mempool_walk(
        [](rte_mempool* mp, void* arg) {
            auto* f = static_cast<walked*>(arg);
            if (f->n < f->pools.size()) {
                f->pools[f->n++] = mp;
            }
        },
        &found);
    const std::span<rte_mempool* const> pools(found.pools.data(), found.n);
    w.gauge("laps_mempool_in_use", "Objects of the mempool in use (mbufs outside the pool).");
    for (auto* mp : pools) {
        w.sample({{"pool", mp->name}}, static_cast<std::uint64_t>(rte_mempool_in_use_count(mp)));
    }
    w.gauge("laps_mempool_available", "Objects of the mempool available (in the pool and its caches).");
    for (auto* mp : pools) {
        w.sample({{"pool", mp->name}}, static_cast<std::uint64_t>(rte_mempool_avail_count(mp)));
    }
    w.gauge("laps_mempool_size", "Objects of the mempool in all.");
    for (auto* mp : pools) {
        w.sample({{"pool", mp->name}}, static_cast<std::uint64_t>(mp->size));
    }
}

} // namespace

const char* content_type(metrics_format format) noexcept
{
    return format == metrics_format::openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                                                 : "text/plain; version=0.0.4; charset=utf-8";
}

void metrics_writer::family(std::string_view name, std::string_view help, std::string_view type)
{
    _name = name;
    _counter = type == "counter";
    // Prometheus text names the counter family by its samples (..._total);
    // OpenMetrics by the name without the suffix.
    const std::string family =
        _counter && _format == metrics_format::prometheus ? _name + "_total" : _name;
    _out += "# HELP " + family + " ";
    escape_into(_out, help, false);
    _out += "\n# TYPE " + family + " ";
    _out += type;
    _out += "\n";
}

void metrics_writer::sample_head(const metric_labels& labels)
{
    _out += _name;
    if (_counter) {
        _out += "_total";
    }
    if (!labels.empty()) {
        _out += '{';
        bool first = true;
        for (const auto& [k, v] : labels) {
            if (!first) {
                _out += ',';
            }
            first = false;
            _out += k;
            _out += "=\"";
            escape_into(_out, v, true);
            _out += '"';
        }
        _out += '}';
    }
    _out += ' ';
}

void metrics_writer::sample(const metric_labels& labels, std::uint64_t value)
{
    sample_head(labels);
    _out += std::to_string(value);
    _out += '\n';
}

void metrics_writer::sample(const metric_labels& labels, double value)
{
    sample_head(labels);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", value);
    _out += buf;
    _out += '\n';
}

std::string metrics_writer::finish()
{
    if (_format == metrics_format::openmetrics) {
        _out += "# EOF\n";
    }
    return std::move(_out);
}

void write_instance_metrics(metrics_writer& w, std::vector<std::unique_ptr<instance>>& instances)
{
    const auto worker_labels = [](const instance& inst, std::size_t worker) {
        return metric_labels{{"instance", inst.name()}, {"worker", std::to_string(worker)}};
    };
    constexpr auto relaxed = std::memory_order_relaxed;

    // Engine counters, per worker.
    for (std::size_t c = 0; c < pipeline::engine_counter_list.size(); ++c) {
        const auto& info = pipeline::engine_counter_list[c];
        if (is_drop(info.name)) {
            continue;
        }
        const std::string name = "laps_engine_" + std::string(info.name);
        if (pipeline::is_maximum(info.name)) {
            w.gauge(name, help_of("Engine: ", info.help));
        } else {
            w.counter(name, help_of("Engine: ", info.help));
        }
        for (const auto& inst : instances) {
            for (std::size_t wk = 0; wk < inst->worker_count(); ++wk) {
                w.sample(worker_labels(*inst, wk), inst->published_at(wk).engine[c].load(relaxed));
            }
        }
    }
    // Worker (shell) counters, per worker.
    for (std::size_t c = 0; c < worker_counter_list.size(); ++c) {
        const auto& info = worker_counter_list[c];
        if (is_drop(info.name)) {
            continue;
        }
        w.counter("laps_worker_" + std::string(info.name), help_of("Worker: ", info.help));
        for (const auto& inst : instances) {
            for (std::size_t wk = 0; wk < inst->worker_count(); ++wk) {
                w.sample(worker_labels(*inst, wk), inst->published_at(wk).worker[c].load(relaxed));
            }
        }
    }
    // Every drop, by reason: the engine's and the shell's counter names.
    w.counter("laps_drops",
              "Packets (or ACKs, probes) dropped, by reason: the engine or worker counter of that name "
              "(docs/pipeline.md).");
    for (const auto& inst : instances) {
        for (std::size_t wk = 0; wk < inst->worker_count(); ++wk) {
            const auto& pub = inst->published_at(wk);
            for (std::size_t c = 0; c < pipeline::engine_counter_list.size(); ++c) {
                if (is_drop(pipeline::engine_counter_list[c].name)) {
                    auto labels = worker_labels(*inst, wk);
                    labels.emplace_back("reason", std::string(pipeline::engine_counter_list[c].name));
                    w.sample(labels, pub.engine[c].load(relaxed));
                }
            }
            for (std::size_t c = 0; c < worker_counter_list.size(); ++c) {
                if (is_drop(worker_counter_list[c].name)) {
                    auto labels = worker_labels(*inst, wk);
                    labels.emplace_back("reason", std::string(worker_counter_list[c].name));
                    w.sample(labels, pub.worker[c].load(relaxed));
                }
            }
        }
    }
    w.counter("laps_parse_errors",
              "LAPS packets from the fabric that failed validation, by reason (wire/parse.hpp; their sum is "
              "fabric_drop_malformed).");
    for (const auto& inst : instances) {
        for (std::size_t wk = 0; wk < inst->worker_count(); ++wk) {
            for (std::size_t i = 1; i < wire::parse_error_count; ++i) {
                auto labels = worker_labels(*inst, wk);
                labels.emplace_back("reason", std::string(wire::to_string(static_cast<wire::parse_error>(i))));
                w.sample(labels, inst->published_at(wk).parse[i].load(relaxed));
            }
        }
    }

    // Per instance: flows, and paths (the console's snapshots).
    std::vector<engine_view> engines;
    std::vector<std::vector<path_stats_view>> paths;
    for (auto& inst : instances) {
        engines.push_back(inspect_engine(*inst));
        paths.push_back(inspect_paths(*inst));
    }
    w.gauge("laps_active_flows", "Sender flows the instance's engines hold.");
    for (std::size_t i = 0; i < instances.size(); ++i) {
        w.sample({{"instance", instances[i]->name()}}, static_cast<std::uint64_t>(engines[i].flows));
    }
    w.gauge("laps_active_receive_flows", "Receiver flows the instance's engines hold.");
    for (std::size_t i = 0; i < instances.size(); ++i) {
        w.sample({{"instance", instances[i]->name()}}, static_cast<std::uint64_t>(engines[i].receive_flows));
    }
    struct path_family {
        const char* name;
        const char* help;
        bool counter;
    };
    static constexpr path_family path_families[] = {
        {"laps_path_data_packets", "DATA packets sent on the path (all workers).", true},
        {"laps_path_data_bytes", "Host-frame bytes sent in DATA packets on the path.", true},
        {"laps_path_probes", "PROBE packets sent on the path (Alg. 1).", true},
        {"laps_path_losses", "Packets found lost on the path (Alg. 3, by gap or timeout).", true},
        {"laps_path_real_latency_seconds", "realVal: the path's measured one-way latency (worker 0).", false},
        {"laps_path_base_latency_seconds", "baseVal: the path's uncongested latency plus margin.", false},
        {"laps_path_valid", "1 when the path may be chosen, 0 when down (console `path <pid> down`).", false},
    };
    for (std::size_t f = 0; f < std::size(path_families); ++f) {
        const auto& fam = path_families[f];
        if (fam.counter) {
            w.counter(fam.name, fam.help);
        } else {
            w.gauge(fam.name, fam.help);
        }
        for (std::size_t i = 0; i < instances.size(); ++i) {
            for (const auto& p : paths[i]) {
                const metric_labels labels{{"instance", instances[i]->name()}, {"pid", std::to_string(p.pid)}};
                switch (f) {
                case 0:
                    w.sample(labels, p.packets);
                    break;
                case 1:
                    w.sample(labels, p.bytes);
                    break;
                case 2:
                    w.sample(labels, p.probes);
                    break;
                case 3:
                    w.sample(labels, p.losses);
                    break;
                case 4:
                    w.sample(labels, static_cast<double>(p.real_ns) / 1e9);
                    break;
                case 5:
                    w.sample(labels, static_cast<double>(p.base_ns) / 1e9);
                    break;
                default:
                    w.sample(labels, static_cast<std::uint64_t>(p.valid ? 1 : 0));
                }
            }
        }
    }
    write_ports(w, instances);
    write_mempools(w);
}

} // namespace laps::app
