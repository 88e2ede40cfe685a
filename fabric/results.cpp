#include "fabric/results.hpp"

#include "fabric/hosts/laps_hosts.hpp"
#include "fabric/hosts/roce_hosts.hpp"
#include "fabric/json_writer.hpp"
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

std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

double us(time_ns t)
{
    return static_cast<double>(t) / 1e3;
}

void json_distribution(json_writer& j, std::string_view key, const distribution& d, int decimals)
{
    j.begin_object(key);
    j.value("count", static_cast<std::uint64_t>(d.count));
    j.value("mean", d.mean, decimals);
    j.value("p50", d.p50, decimals);
    j.value("p99", d.p99, decimals);
    j.value("max", d.max, decimals);
    j.end_object();
}

std::string beta_text(const config::laps_config& c)
{
    const auto& b = c.selection.beta;
    if (b.mode == softmax::beta_mode::fixed) {
        return "fixed " + fixed(b.fixed_per_ns * 1000.0, 4) + "/us";
    }
    return "normalized alpha " + fixed(b.alpha, 4);
}

void print_fairness(std::ostream& out, const std::string& label, const traffic_summary& t)
{
    const fairness_summary& f = t.fairness;
    out << "fairness   " << label << "Jain " << fixed(f.jain, 3);
    if (f.completion_ns >= 0) {
        out << ", all done in " << fixed(us(f.completion_ns), 1) << " us = " << fixed(f.bound_ratio, 3) << " x bound "
            << fixed(us(f.bound_ns), 1) << " us";
    } else {
        out << ", " << (t.flows - t.completed) << " flows incomplete (bound " << fixed(us(f.bound_ns), 1) << " us)";
    }
    if (!f.slowest.empty()) {
        out << ", slowest " << f.slowest << " " << fixed(t.fct_us.max, 1) << " us";
    }
    out << "\n";
    if (f.by_paths.size() > 1) {
        out << "           by paths:";
        const char* sep = " ";
        for (const auto& g : f.by_paths) {
            out << sep << g.paths << ": " << g.flows << " flows, FCT avg " << fixed(g.mean_fct_us, 1) << " max "
                << fixed(g.max_fct_us, 1) << " us";
            sep = "; ";
        }
        out << "\n";
    }
}

void json_fairness(json_writer& j, const traffic_summary& t)
{
    const fairness_summary& f = t.fairness;
    j.begin_object("fairness");
    j.value("jain", f.jain, 4);
    j.value("completion_ns", f.completion_ns);
    j.value("bound_ns", f.bound_ns);
    j.value("bound_ratio", f.bound_ratio, 4);
    j.value("slowest_flow", f.slowest);
    j.value("slowest_fct_us", t.fct_us.max, 3);
    j.begin_array("by_paths");
    for (const auto& g : f.by_paths) {
        j.begin_object();
        j.value("paths", static_cast<std::uint64_t>(g.paths));
        j.value("flows", static_cast<std::uint64_t>(g.flows));
        j.value("mean_fct_us", g.mean_fct_us, 3);
        j.value("max_fct_us", g.max_fct_us, 3);
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

} // namespace

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
    s.scenario = sc.name;
    s.file = sc.file;
    s.description = sc.description;
    s.seed = sim.seed();
    s.scale = sim.scale();
    s.load_override = sim.options().load.value_or(0.0);
    s.topology = sc.topology_label;
    s.family = std::string(topology::to_string(topo.family()));
    s.hosts = topo.host_count();
    s.switches = topo.switch_count();
    s.pfc = sc.fabric.pfc;
    s.cc = congestion::to_string(sc.algo.congestion.aimd.variant);
    s.coupled_paths =
        sc.algo.congestion.aimd.variant == congestion::cc_variant::fair && sc.algo.congestion.aimd.fair.coupled_paths;
    s.timeout_floor_ns = path_timeout_floor(sc);
    s.links = topo.link_count();
    s.policy = std::string(softmax::to_string(sc.algo.selection.policy)) +
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
    s.end_ns = sim.end_time();
    s.stopped_ns = sim.now();
    s.events = sim.events_run();
    s.faults = sim.fault_log();

    // Drops and retransmissions.
    s.drops = sim.drops();
    for (std::size_t r = 0; r < drop_reason_count; ++r) {
        s.data_dropped += s.drops[static_cast<std::size_t>(packet_class::data)][r];
        s.acks_dropped += s.drops[static_cast<std::size_t>(packet_class::ack)][r];
    }

    // Engines, summed.
    s.reorder.assign(pipeline::engine::reorder_histogram_size, 0);
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
        for (std::size_t b = 0; b < hist.size() && b < s.reorder.size(); ++b) {
            s.reorder[b] += hist[b];
        }
        s.reorder_max = roce->reorder_max();
    }
    const auto* engines = sim.laps_hosts();
    for (const auto& h : sim.hosts()) {
        if (engines == nullptr) {
            add_pair_classes(h); // a RoCE host
            continue;
        }
        const auto& e = engines->engine(h.id);
        pipeline::accumulate(s.engines, e.counters());
        s.reorder_max = s.engines.reorder_held_max;
        const auto& hist = e.reorder_histogram();
        for (std::size_t b = 0; b < hist.size(); ++b) {
            s.reorder[b] += hist[b];
        }
        s.frame_pool_waits += engines->at(h.id).frame_pool_waits;
        s.flow_table_waits += engines->at(h.id).flow_table_waits;

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
    s.scheme = std::string(sim.scheme().name);
    s.roce = sim.roce();
    if (const auto* roce = sim.roce_hosts()) {
        s.roce_totals = roce->counters();
        s.scheme_counters = schemes::counter_report(sim.scheme(), sim.balancer());
        s.scheme_note = sim.balancer().note();
        s.policy = std::string(sim.scheme().summary);
        s.retransmissions = s.roce_totals.data_resent;
        s.spurious = s.roce_totals.rx_duplicates;
    }

    // Reorder occupancy: bucket b = frames already held when a DATA arrived.
    std::uint64_t arrivals = 0;
    double held = 0;
    for (std::size_t b = 0; b < s.reorder.size(); ++b) {
        arrivals += s.reorder[b];
        held += static_cast<double>(b) * static_cast<double>(s.reorder[b]);
    }
    s.reorder_mean = arrivals == 0 ? 0 : held / static_cast<double>(arrivals);
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < s.reorder.size(); ++b) {
        seen += s.reorder[b];
        if (arrivals > 0 && static_cast<double>(seen) >= 0.99 * static_cast<double>(arrivals)) {
            s.reorder_p99 = b;
            break;
        }
    }

    // Queues.
    s.switch_queue_limit = sc.fabric.port_queue_bytes;
    for (const auto& p : sim.ports()) {
        auto& slot = sim.nodes()[p.from].is_host ? s.max_host_queue_bytes : s.max_switch_queue_bytes;
        slot = std::max(slot, p.counters.max_queue_bytes);
        s.pfc_pauses += p.counters.pauses;
        s.pfc_paused_at_end += p.paused && !p.queue.empty() ? 1 : 0;
    }
    for (const auto& n : sim.nodes()) {
        if (!n.is_host) {
            s.max_switch_buffer_bytes = std::max(s.max_switch_buffer_bytes, n.max_buffered);
        }
    }
    return s;
}

void write_flows_csv(std::ostream& out, const simulation& sim)
{
    const auto& topo = sim.topology();
    out << "flow,src,dst,traffic,bytes,frames,start_ns,end_ns,fct_ns,ideal_fct_ns,slowdown,retransmissions,completed\n";
    for (const auto& f : sim.flows()) {
        out << f.id << ',' << topo.name(f.spec.src) << ',' << topo.name(f.spec.dst) << ',' << f.spec.tag << ','
            << f.spec.bytes << ',' << f.frames << ',' << f.spec.start << ',';
        if (f.complete()) {
            out << f.end << ',' << f.fct() << ',' << f.ideal_ns << ','
                << fixed(static_cast<double>(f.fct()) / static_cast<double>(std::max<time_ns>(1, f.ideal_ns)), 4);
        } else {
            out << ",," << f.ideal_ns << ',';
        }
        out << ',' << f.resent << ',' << (f.complete() ? 1 : 0) << '\n';
    }
}

void write_paths_csv(std::ostream& out, const simulation& sim)
{
    const auto& topo = sim.topology();
    out << "src,dst,pid,hops,anchors,base_ns,uncongested_ns,packets\n";
    for (const auto& h : sim.hosts()) {
        const auto& per_path = sim.packets_per_path(h.id);
        std::map<tables::path_id, const tables::pit_row*> rows;
        for (const auto& row : h.table.pit) {
            rows[row.pid] = &row;
        }
        for (const auto& pst : h.table.pst) {
            std::uint64_t total = 0;
            for (const auto pid : pst.pids) {
                total += pid < per_path.size() ? per_path[pid] : 0;
            }
            if (total == 0) {
                continue;
            }
            const auto dst = topo.host_by_address(pst.destination);
            for (const auto pid : pst.pids) {
                const auto* row = rows[pid];
                std::string anchors;
                for (std::size_t a = 0; a < row->anchor_count; ++a) {
                    if (a > 0) {
                        anchors += '|';
                    }
                    anchors += topo.name(row->anchors[a]);
                }
                out << topo.name(h.id) << ',' << (dst ? topo.name(*dst) : pst.destination.to_string()) << ',' << pid
                    << ',' << int{row->hop_count} << ',' << anchors << ',' << row->base_ns << ','
                    << row->uncongested_ns << ',' << (pid < per_path.size() ? per_path[pid] : 0) << '\n';
            }
        }
    }
}

void write_links_csv(std::ostream& out, const simulation& sim)
{
    const auto& topo = sim.topology();
    const double span = static_cast<double>(std::max<time_ns>(1, sim.now()));
    out << "link,from,to,rate_gbps,delay_ns,packets,bytes,data_packets,data_bytes,utilization,max_queue_bytes,"
           "max_priority_queue_bytes,mean_queue_bytes,ce_marked,pfc_pauses,pfc_paused_ns";
    for (std::size_t r = 0; r < drop_reason_count; ++r) {
        out << ",drop_" << to_string(static_cast<drop_reason>(r));
    }
    out << '\n';
    for (const auto& p : sim.ports()) {
        const auto& c = p.counters;
        // Queue integral up to the end of the run.
        const double integral =
            c.queue_byte_ns + static_cast<double>(p.occupancy()) * static_cast<double>(sim.now() - p.queue_changed_at);
        out << p.link << ',' << topo.name(p.from) << ',' << topo.name(p.to) << ',' << fixed(p.rate_bps / 1e9, 3) << ','
            << p.delay_ns << ',' << c.packets << ',' << c.bytes << ',' << c.data_packets << ',' << c.data_bytes << ','
            << fixed(static_cast<double>(c.busy_ns) / span, 4) << ',' << c.max_queue_bytes << ','
            << c.max_priority_bytes << ',' << fixed(integral / span, 1) << ',' << c.ce_marked << ',' << c.pauses
            << ',' << c.paused_ns + (p.paused ? sim.now() - p.paused_at : 0);
        for (const auto d : c.drops) {
            out << ',' << d;
        }
        out << '\n';
    }
}

void write_reorder_csv(std::ostream& out, const run_summary& s)
{
    out << "frames_held,arrivals\n";
    for (std::size_t b = 0; b < s.reorder.size(); ++b) {
        out << b << (b + 1 == s.reorder.size() ? "+" : "") << ',' << s.reorder[b] << '\n';
    }
}

void write_summary_json(std::ostream& out, const run_summary& s)
{
    json_writer j(out);
    j.begin_object();
    j.value("scenario", s.scenario);
    j.value("file", s.file);
    j.value("seed", s.seed);
    j.value("scale", s.scale, 6);
    if (s.load_override > 0) {
        j.value("load", s.load_override, 4);
    }
    j.value("policy", s.policy);
    j.value("scheme", s.scheme);
    if (!s.roce) {
        j.value("cc", s.cc);
        if (s.coupled_paths) {
            j.value("coupled_paths", true);
        }
        j.value("path_timeout_floor_us", static_cast<double>(s.timeout_floor_ns) / 1e3, 3);
    }
    j.value("fabric", s.pfc ? "pfc" : "droptail");
    j.begin_object("topology");
    j.value("source", s.topology);
    j.value("family", s.family);
    j.value("hosts", static_cast<std::uint64_t>(s.hosts));
    j.value("switches", static_cast<std::uint64_t>(s.switches));
    j.value("links", static_cast<std::uint64_t>(s.links));
    j.end_object();

    j.begin_object("flows");
    j.value("total", static_cast<std::uint64_t>(s.flows));
    j.value("completed", static_cast<std::uint64_t>(s.completed));
    j.value("bytes_offered", s.bytes_offered);
    j.value("bytes_delivered", s.bytes_delivered);
    j.value("host_duplicates", s.host_duplicates);
    json_distribution(j, "fct_us", s.fct_us, 3);
    json_distribution(j, "slowdown", s.slowdown, 4);
    j.begin_array("by_traffic");
    for (const auto& t : s.traffic) {
        j.begin_object();
        j.value("traffic", t.label);
        j.value("flows", static_cast<std::uint64_t>(t.flows));
        j.value("completed", static_cast<std::uint64_t>(t.completed));
        json_distribution(j, "fct_us", t.fct_us, 3);
        json_distribution(j, "slowdown", t.slowdown, 4);
        json_fairness(j, t);
        j.end_object();
    }
    j.end_array();
    j.end_object();

    j.begin_object("time");
    j.value("last_completion_ns", s.end_ns);
    j.value("stopped_ns", s.stopped_ns);
    j.value("events", s.events);
    j.end_object();

    j.begin_object("drops");
    static constexpr std::string_view class_names[] = {"data", "ack", "probe", "probe_ack", "plain"};
    for (std::size_t c = 0; c < packet_class_count; ++c) {
        j.begin_object(class_names[c]);
        for (std::size_t r = 0; r < drop_reason_count; ++r) {
            j.value(to_string(static_cast<drop_reason>(r)), s.drops[c][r]);
        }
        j.end_object();
    }
    j.end_object();

    j.begin_object("retransmissions");
    j.value("total", s.retransmissions);
    j.value("data_lost", s.data_dropped);
    j.value("acks_lost", s.acks_dropped);
    j.value("spurious", s.spurious);
    j.value("loss_by_gap", s.engines.loss_by_gap);
    j.value("loss_by_timeout", s.engines.loss_by_timeout);
    j.value("loss_spurious", s.engines.loss_spurious);
    j.end_object();

    j.begin_array("path_classes");
    for (std::size_t i = 0; i < s.classes.size(); ++i) {
        const auto& c = s.classes[i];
        j.begin_object();
        std::string name = std::to_string(i + 1);
        name.insert(name.begin(), 'L');
        j.value("class", name);
        j.value("hops", c.hops);
        j.value("paths", c.paths);
        j.value("packets", c.packets);
        j.value("share", c.share, 4);
        j.value("normalized", c.normalized, 4);
        j.end_object();
    }
    j.end_array();

    j.begin_object("reorder");
    j.value("mean_frames", s.reorder_mean, 4);
    j.value("p99_frames", s.reorder_p99);
    j.value("max_frames", s.reorder_max);
    j.end_object();

    j.begin_object("queues");
    j.value("switch_port_limit_bytes", s.switch_queue_limit);
    j.value("max_switch_port_bytes", s.max_switch_queue_bytes);
    j.value("max_switch_buffer_bytes", s.max_switch_buffer_bytes);
    j.value("max_host_port_bytes", s.max_host_queue_bytes);
    j.value("pfc_pauses", s.pfc_pauses);
    j.value("pfc_paused_at_end", s.pfc_paused_at_end);
    j.end_object();

    j.begin_object("hosts");
    j.value("frame_pool_waits", s.frame_pool_waits);
    j.value("flow_table_waits", s.flow_table_waits);
    j.end_object();

    j.begin_object("engines");
    for (const auto& info : pipeline::engine_counter_list) {
        j.value(info.name, s.engines.*(info.field));
    }
    j.end_object();

    if (s.roce) {
        j.begin_object("roce");
        for (const auto& info : hosts::roce_counter_list) {
            j.value(info.name, s.roce_totals.*(info.field));
        }
        for (const auto& [name, value] : s.scheme_counters) {
            j.value(name, value);
        }
        j.end_object();
    }

    j.begin_array("faults");
    for (const auto& [t, label] : s.faults) {
        j.begin_object();
        j.value("at_ns", t);
        j.value("fault", label);
        j.end_object();
    }
    j.end_array();

    j.begin_array("mbuf_pools");
    for (const auto& p : s.pools) {
        j.begin_object();
        j.value("pool", p.name.substr(p.name.find('_') + 1)); // without the per-run prefix
        j.value("size", p.size);
        j.value("in_use_at_end", p.in_use);
        j.end_object();
    }
    j.end_array();
    j.end_object();
    j.finish();
}

void print_summary(std::ostream& out, const run_summary& s)
{
    out << "scenario   " << s.scenario << "  (seed " << s.seed << ", scale " << fixed(s.scale, 4)
        << (s.load_override > 0 ? ", load " + fixed(s.load_override, 2) : std::string()) << ", scheme " << s.scheme
        << ": " << s.policy
        << (s.roce ? std::string()
                   : ", cc " + s.cc + (s.coupled_paths ? " (coupled paths)" : "") + ", path timeout >= " + fixed(static_cast<double>(s.timeout_floor_ns) / 1e3, 0) + " us")
        << ")\n";
    out << "topology   " << s.family << " (" << s.topology << "): " << s.hosts << " hosts, " << s.switches
        << " switches, " << s.links << " links, " << (s.pfc ? "lossless (PFC)" : "DropTail") << "\n";
    out << "flows      " << s.completed << "/" << s.flows << " completed, " << s.bytes_delivered << " of "
        << s.bytes_offered << " bytes delivered, last at " << fixed(us(s.end_ns), 1) << " us ("
        << s.events << " events)\n";
    char line[256];
    std::snprintf(line, sizeof line, "%-10s %12s %12s %12s %12s\n", "", "avg", "p50", "p99", "max");
    out << line;
    std::snprintf(line, sizeof line, "%-10s %12.1f %12.1f %12.1f %12.1f\n", "FCT (us)", s.fct_us.mean, s.fct_us.p50,
                  s.fct_us.p99, s.fct_us.max);
    out << line;
    std::snprintf(line, sizeof line, "%-10s %12.3f %12.3f %12.3f %12.3f\n", "slowdown", s.slowdown.mean,
                  s.slowdown.p50, s.slowdown.p99, s.slowdown.max);
    out << line;
    if (s.traffic.size() > 1) {
        for (const auto& t : s.traffic) {
            out << "  " << t.label << ": " << t.completed << "/" << t.flows << " flows, FCT avg "
                << fixed(t.fct_us.mean, 1) << " us, p99 " << fixed(t.fct_us.p99, 1) << " us, slowdown avg "
                << fixed(t.slowdown.mean, 3) << "\n";
        }
    }
    for (const auto& t : s.traffic) {
        print_fairness(out, s.traffic.size() > 1 ? t.label + ": " : std::string(), t);
    }
    std::uint64_t total_drops = 0;
    std::string reasons;
    for (std::size_t r = 0; r < drop_reason_count; ++r) {
        std::uint64_t n = 0;
        for (std::size_t c = 0; c < packet_class_count; ++c) {
            n += s.drops[c][r];
        }
        if (n > 0) {
            if (!reasons.empty()) {
                reasons += ", ";
            }
            reasons += to_string(static_cast<drop_reason>(r));
            reasons += ' ';
            reasons += std::to_string(n);
        }
        total_drops += n;
    }
    out << "drops      " << total_drops << (reasons.empty() ? "" : " (" + reasons + ")") << "; DATA "
        << s.data_dropped << ", ACK " << s.acks_dropped << "\n";
    out << "resends    " << s.retransmissions << ": true losses " << s.data_dropped << " DATA + " << s.acks_dropped
        << " ACK, spurious " << s.spurious << " (receiver duplicates); detected by gap " << s.engines.loss_by_gap
        << ", by timeout " << s.engines.loss_by_timeout << "\n";
    out << "paths      ";
    if (s.classes.empty()) {
        out << "no DATA sent";
    }
    for (std::size_t i = 0; i < s.classes.size(); ++i) {
        const auto& c = s.classes[i];
        out << (i == 0 ? "" : "  ") << "L" << i + 1 << " (" << c.hops << " hops) " << fixed(100 * c.share, 1)
            << "% x" << fixed(c.normalized, 2);
    }
    out << "   (traffic share, x normalised to uniform spraying)\n";
    out << "reorder    mean " << fixed(s.reorder_mean, 2) << " frames held at arrival, p99 " << s.reorder_p99
        << ", max " << s.reorder_max << "\n";
    out << "queues     max switch port " << s.max_switch_queue_bytes << " B (limit " << s.switch_queue_limit
        << "), max switch buffer " << s.max_switch_buffer_bytes << " B, max host port " << s.max_host_queue_bytes
        << " B" << (s.pfc_pauses > 0 ? ", " + std::to_string(s.pfc_pauses) + " PFC pauses" : std::string()) << "\n";
    if (s.roce) {
        const auto& r = s.roce_totals;
        out << "RoCE       " << r.data_sent << " DATA (" << r.data_resent << " resent), " << r.nacks_sent
            << " NACKs, " << r.timeouts << " timeouts, " << r.cnps_sent << " CNPs, " << r.rate_decreases
            << " rate cuts, " << s.scheme_counter("path_changes") << " path changes" << s.scheme_note << "\n";
    } else {
        out << "AIMD       " << s.engines.aimd_decrease << " decreases, " << s.engines.aimd_increase
            << " increases, " << s.engines.aimd_hyper_increase << " hyper; probes " << s.engines.probe_sent << "\n";
    }
    if (s.completed < s.flows) {
        out << "note       " << s.flows - s.completed << " flows did not complete by run.max_time\n";
        if (s.pfc_paused_at_end > 0) {
            out << "note       " << s.pfc_paused_at_end
                << " ports were paused with packets queued when the run stopped: a PFC deadlock (cyclic buffer "
                   "dependency among the candidate paths; docs/testbed.md, PFC)\n";
        }
    }
    if (s.flow_table_waits > 0 || s.engines.data_drop_flow_table_full > 0) {
        out << "note       engine flow tables were full (" << s.flow_table_waits << " first frames held back, "
            << s.engines.data_drop_flow_table_full << " DATA dropped at receivers): raise tables.flow_capacity\n";
    }
    if (s.engines.data_drop_beyond_window > 0) {
        out << "note       " << s.engines.data_drop_beyond_window
            << " DATA beyond a receiver's window: a receiver forgot a live flow (4 x engine.flow_idle_us "
               "without DATA); such a flow may never complete\n";
    }
    if (s.frame_pool_waits > 0) {
        out << "note       hosts waited " << s.frame_pool_waits
            << " times for a host-frame mbuf: raise fabric.memory_mb\n";
    }
    bool leaked = false;
    for (const auto& p : s.pools) {
        leaked = leaked || p.in_use != 0;
    }
    if (leaked) {
        out << "MBUF LEAK ";
        for (const auto& p : s.pools) {
            out << p.name << " " << p.in_use << "  ";
        }
        out << "\n";
    }
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
