#include "fabric/results.hpp"

#include "fabric/hosts/laps_hosts.hpp"
#include "fabric/hosts/roce_hosts.hpp"
#include "fabric/schemes/scheme.hpp"
#include "softmax/policy.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <stdexcept>

namespace laps::fabric {

namespace {

std::string beta_text(const config::laps_config& c)
{
    const auto& b = c.selection.beta;
    if (b.mode == softmax::beta_mode::fixed) {
        return "fixed " + fixed(b.fixed_per_ns * 1000.0, 4) + "/us";
    }
    return "normalized alpha " + fixed(b.alpha, 4);
}

} // namespace

std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

distribution describe(std::vector<double>& values)
{
    distribution d;
    d.count = values.size();
    if (values.empty()) {
        return d;
    }
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (const double v : values) {
        sum += v;
    }
    const auto rank = [&](double p) {
        const auto r = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
        return values[std::clamp<std::size_t>(r, 1, values.size()) - 1];
    };
    d.mean = sum / static_cast<double>(values.size());
    d.p50 = rank(50);
    d.p99 = rank(99);
    d.max = values.back();
    return d;
}

std::uint64_t run_summary::scheme_counter(std::string_view name) const
{
    for (const auto& [n, value] : scheme_counters) {
        if (n == name) {
            return value;
        }
    }
    throw std::out_of_range("no scheme counter '" + std::string(name) + "'");
}

run_summary summarize(const simulation& sim)
{
    const auto& sc = sim.config();
    const auto& topo = sim.topology();
    run_summary s;
    s.run.scenario = sc.name;
    s.run.file = sc.file;
    s.run.description = sc.description;
    s.run.seed = sim.seed();
    s.run.scale = sim.scale();
    s.run.load_override = sim.options().load.value_or(0.0);
    s.run.topology = sc.topology_label;
    s.run.family = std::string(topology::to_string(topo.family()));
    s.run.hosts = topo.host_count();
    s.run.switches = topo.switch_count();
    s.run.pfc = sc.fabric.pfc;
    s.run.cc = congestion::to_string(sc.algo.congestion.aimd.variant);
    s.run.coupled_paths =
        sc.algo.congestion.aimd.variant == congestion::cc_variant::fair && sc.algo.congestion.aimd.fair.coupled_paths;
    s.run.timeout_floor_ns = path_timeout_floor(sc);
    s.run.links = topo.link_count();
    s.run.policy = std::string(softmax::to_string(sc.algo.selection.policy)) +
               (sc.algo.selection.policy == softmax::policy::laps ? " (beta " + beta_text(sc.algo) + ")" : "");

    // Flows, overall and per traffic item.
    std::vector<double> fct;
    std::vector<double> slow;
    std::vector<std::vector<double>> item_fct(sc.traffic.size());
    std::vector<std::vector<double>> item_slow(sc.traffic.size());
    s.traffic.resize(sc.traffic.size());
    for (std::size_t i = 0; i < sc.traffic.size(); ++i) {
        s.traffic[i].label = sc.traffic[i].label;
    }
    for (const auto& f : sim.flows()) {
        ++s.flows;
        ++s.traffic[f.spec.tag].flows;
        s.host_duplicates += f.duplicates;
        if (!f.complete()) {
            continue;
        }
        ++s.completed;
        ++s.traffic[f.spec.tag].completed;
        const double fct_us = us(f.fct());
        const double sd = static_cast<double>(f.fct()) / static_cast<double>(std::max<time_ns>(1, f.ideal_ns));
        fct.push_back(fct_us);
        slow.push_back(sd);
        item_fct[f.spec.tag].push_back(fct_us);
        item_slow[f.spec.tag].push_back(sd);
    }
    s.fct_us = describe(fct);
    s.slowdown = describe(slow);
    const auto fairness = summarize_fairness(sim);
    for (std::size_t i = 0; i < sc.traffic.size(); ++i) {
        s.traffic[i].fct_us = describe(item_fct[i]);
        s.traffic[i].slowdown = describe(item_slow[i]);
        s.traffic[i].fairness = fairness[i];
    }
    s.bytes_offered = sim.bytes_offered();
    s.bytes_delivered = sim.bytes_delivered();
    s.time.end_ns = sim.end_time();
    s.time.stopped_ns = sim.now();
    s.time.events = sim.events_run();
    s.faults = sim.fault_log();

    // Drops and retransmissions.
    s.drops = sim.drops();
    for (std::size_t r = 0; r < drop_reason_count; ++r) {
        s.data_dropped += s.drops[static_cast<std::size_t>(packet_class::data)][r];
        s.acks_dropped += s.drops[static_cast<std::size_t>(packet_class::ack)][r];
    }

    // Engines, summed.
    s.reorder.histogram.assign(pipeline::engine::reorder_histogram_size, 0);
    std::map<std::uint32_t, path_class> classes;
    double weighted_uniform_total = 0;
    std::map<std::uint32_t, double> uniform_by_class;
    std::uint64_t all_packets = 0;
    // Fig. 19, per (this host, destination) pair.
    const auto add_pair_classes = [&](const host_info& h) {
        const auto& per_path = sim.packets_per_path(h.id);
        std::map<tables::path_id, std::uint32_t> hops;
        for (const auto& row : h.table.pit) {
            hops[row.pid] = row.hop_count;
        }
        for (const auto& row : h.table.pst) {
            std::uint64_t pair_packets = 0;
            std::map<std::uint32_t, std::uint32_t> count_by_class;
            for (const auto pid : row.pids) {
                pair_packets += pid < per_path.size() ? per_path[pid] : 0;
                ++count_by_class[hops[pid]];
            }
            if (pair_packets == 0) {
                continue;
            }
            all_packets += pair_packets;
            for (const auto pid : row.pids) {
                auto& c = classes[hops[pid]];
                c.hops = hops[pid];
                ++c.paths;
                c.packets += pid < per_path.size() ? per_path[pid] : 0;
            }
            for (const auto& [cls, n] : count_by_class) {
                const double expected =
                    static_cast<double>(pair_packets) * static_cast<double>(n) / static_cast<double>(row.pids.size());
                uniform_by_class[cls] += expected;
                weighted_uniform_total += expected;
            }
        }
    };
    if (const auto* roce = sim.roce_hosts()) {
        // IRN receivers' out-of-order PSNs held at each DATA arrival (Go-Back-N holds none).
        const auto& hist = roce->reorder_histogram();
        for (std::size_t b = 0; b < hist.size() && b < s.reorder.histogram.size(); ++b) {
            s.reorder.histogram[b] += hist[b];
        }
        s.reorder.max = roce->reorder_max();
    }
    const auto* engines = sim.laps_hosts();
    for (const auto& h : sim.hosts()) {
        if (engines == nullptr || !engines->has_engine(h.id)) {
            add_pair_classes(h); // a RoCE host, or one with no flows
            continue;
        }
        const auto& e = engines->engine(h.id);
        pipeline::accumulate(s.engines, e.counters());
        s.reorder.max = s.engines.reorder_held_max;
        const auto& hist = e.reorder_histogram();
        for (std::size_t b = 0; b < hist.size(); ++b) {
            s.reorder.histogram[b] += hist[b];
        }
        s.waits.frame_pool += engines->at(h.id).frame_pool_waits;
        s.waits.flow_table += engines->at(h.id).flow_table_waits;

        add_pair_classes(h);
    }
    for (auto& [hop, c] : classes) {
        c.share = all_packets == 0 ? 0 : static_cast<double>(c.packets) / static_cast<double>(all_packets);
        const double uniform = uniform_by_class[hop];
        c.normalized = uniform > 0 ? static_cast<double>(c.packets) / uniform : 0;
        s.classes.push_back(c);
    }
    (void)weighted_uniform_total;
    s.retransmissions = s.engines.data_resent;
    s.spurious = s.engines.data_drop_duplicate;
    s.run.scheme = std::string(sim.scheme().name);
    s.run.roce = sim.roce();
    if (const auto* roce = sim.roce_hosts()) {
        s.roce_totals = roce->counters();
        s.scheme_counters = schemes::counter_report(sim.scheme(), sim.balancer());
        s.scheme_note = sim.balancer().note();
        s.run.policy = std::string(sim.scheme().summary);
        s.retransmissions = s.roce_totals.data_resent;
        s.spurious = s.roce_totals.rx_duplicates;
    }

    // Reorder occupancy: bucket b = frames already held when a DATA arrived.
    std::uint64_t arrivals = 0;
    double held = 0;
    for (std::size_t b = 0; b < s.reorder.histogram.size(); ++b) {
        arrivals += s.reorder.histogram[b];
        held += static_cast<double>(b) * static_cast<double>(s.reorder.histogram[b]);
    }
    s.reorder.mean = arrivals == 0 ? 0 : held / static_cast<double>(arrivals);
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < s.reorder.histogram.size(); ++b) {
        seen += s.reorder.histogram[b];
        if (arrivals > 0 && static_cast<double>(seen) >= 0.99 * static_cast<double>(arrivals)) {
            s.reorder.p99 = b;
            break;
        }
    }

    // Queues.
    s.queues.switch_queue_limit = sc.fabric.port_queue_bytes;
    for (const auto& p : sim.ports()) {
        auto& slot = sim.nodes()[p.from].is_host ? s.queues.max_host_queue_bytes : s.queues.max_switch_queue_bytes;
        slot = std::max(slot, p.counters.max_queue_bytes);
        s.queues.pfc_pauses += p.counters.pauses;
        s.queues.pfc_paused_at_end += p.paused && !p.queue.empty() ? 1 : 0;
    }
    for (const auto& n : sim.nodes()) {
        if (!n.is_host) {
            s.queues.max_switch_buffer_bytes = std::max(s.queues.max_switch_buffer_bytes, n.max_buffered);
        }
    }
    return s;
}

run_summary write_results(simulation& sim, const std::string& dir, std::ostream* table)
{
    std::filesystem::create_directories(dir);
    const auto open = [&](const std::string& name) {
        std::ofstream f(std::filesystem::path(dir) / name);
        if (!f) {
            throw std::runtime_error("cannot write " + (std::filesystem::path(dir) / name).string());
        }
        return f;
    };
    run_summary s = summarize(sim);
    {
        auto f = open("flows.csv");
        write_flows_csv(f, sim);
    }
    {
        auto f = open("paths.csv");
        write_paths_csv(f, sim);
    }
    {
        auto f = open("links.csv");
        write_links_csv(f, sim);
    }
    {
        auto f = open("reorder.csv");
        write_reorder_csv(f, s);
    }
    s.pools = sim.release();
    {
        auto f = open("summary.json");
        write_summary_json(f, s);
    }
    if (table != nullptr) {
        print_summary(*table, s);
    }
    return s;
}

} // namespace laps::fabric
