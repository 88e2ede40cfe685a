// summary.json (results.hpp).
#include "fabric/hosts/roce_nic.hpp"
#include "fabric/json_writer.hpp"
#include "fabric/results.hpp"

#include <ostream>

namespace laps::fabric {

namespace {

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

void json_fairness(json_writer& j, const traffic_summary& t)
{
    const fairness_summary& f = t.fairness;
    j.begin_object("fairness");
    j.value("jain", f.jain, 4);
    j.value("completion_ns", f.completion_ns);
    j.value("bound_ns", f.bound_ns);
    j.value("bound_ratio", f.bound_ratio, 4);
    j.value("wire_bound_ns", f.wire_bound_ns);
    j.value("wire_bound_ratio", f.wire_bound_ratio, 4);
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

void write_summary_json(std::ostream& out, const run_summary& s)
{
    json_writer j(out);
    j.begin_object();
    j.value("scenario", s.run.scenario);
    j.value("file", s.run.file);
    j.value("seed", s.run.seed);
    j.value("scale", s.run.scale, 6);
    if (s.run.load_override > 0) {
        j.value("load", s.run.load_override, 4);
    }
    j.value("policy", s.run.policy);
    j.value("scheme", s.run.scheme);
    if (!s.run.roce) {
        j.value("cc", s.run.cc);
        if (s.run.coupled_paths) {
            j.value("coupled_paths", true);
        }
        j.value("path_timeout_floor_us", static_cast<double>(s.run.timeout_floor_ns) / 1e3, 3);
    }
    j.value("fabric", s.run.pfc ? "pfc" : "droptail");
    j.begin_object("topology");
    j.value("source", s.run.topology);
    j.value("family", s.run.family);
    j.value("hosts", static_cast<std::uint64_t>(s.run.hosts));
    j.value("switches", static_cast<std::uint64_t>(s.run.switches));
    j.value("links", static_cast<std::uint64_t>(s.run.links));
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
    j.value("last_completion_ns", s.time.end_ns);
    j.value("stopped_ns", s.time.stopped_ns);
    j.value("events", s.time.events);
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
    j.value("mean_frames", s.reorder.mean, 4);
    j.value("p99_frames", s.reorder.p99);
    j.value("max_frames", s.reorder.max);
    j.end_object();

    j.begin_object("queues");
    j.value("switch_port_limit_bytes", s.queues.switch_queue_limit);
    j.value("max_switch_port_bytes", s.queues.max_switch_queue_bytes);
    j.value("max_switch_buffer_bytes", s.queues.max_switch_buffer_bytes);
    j.value("max_host_port_bytes", s.queues.max_host_queue_bytes);
    j.value("pfc_pauses", s.queues.pfc_pauses);
    j.value("pfc_paused_at_end", s.queues.pfc_paused_at_end);
    j.end_object();

    j.begin_object("hosts");
    j.value("frame_pool_waits", s.waits.frame_pool);
    j.value("flow_table_waits", s.waits.flow_table);
    j.end_object();

    j.begin_object("engines");
    for (const auto& info : pipeline::engine_counter_list) {
        j.value(info.name, s.engines.*(info.field));
    }
    j.end_object();

    if (s.run.roce) {
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

} // namespace laps::fabric
