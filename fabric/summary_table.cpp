// The summary table a run prints (results.hpp).
#include "fabric/results.hpp"

#include <cstdio>
#include <ostream>

namespace laps::fabric {

namespace {

void print_fairness(std::ostream& out, const std::string& label, const traffic_summary& t)
{
    const fairness_summary& f = t.fairness;
    out << "fairness   " << label << "Jain " << fixed(f.jain, 3);
    if (f.completion_ns >= 0) {
        out << ", all done in " << fixed(us(f.completion_ns), 1) << " us = " << fixed(f.bound_ratio, 3) << " x bound "
            << fixed(us(f.bound_ns), 1) << " us (host bytes), " << fixed(f.wire_bound_ratio, 3) << " x "
            << fixed(us(f.wire_bound_ns), 1) << " us (wire bytes)";
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

} // namespace

void print_summary(std::ostream& out, const run_summary& s)
{
    const auto& run = s.run;
    out << "scenario   " << run.scenario << "  (seed " << run.seed << ", scale " << fixed(run.scale, 4)
        << (run.load_override > 0 ? ", load " + fixed(run.load_override, 2) : std::string()) << ", scheme " << run.scheme
        << ": " << run.policy
        << (run.roce ? std::string()
                   : ", cc " + run.cc + (run.coupled_paths ? " (coupled paths)" : "") + ", path timeout >= " +
                         fixed(static_cast<double>(run.timeout_floor_ns) / 1e3, 0) + " us")
        << ")\n";
    out << "topology   " << run.family << " (" << run.topology << "): " << run.hosts << " hosts, " << run.switches
        << " switches, " << run.links << " links, " << (run.pfc ? "lossless (PFC)" : "DropTail") << "\n";
    out << "flows      " << s.completed << "/" << s.flows << " completed, " << s.bytes_delivered << " of "
        << s.bytes_offered << " bytes delivered, last at " << fixed(us(s.time.end_ns), 1) << " us ("
        << s.time.events << " events)\n";
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
    out << "reorder    mean " << fixed(s.reorder.mean, 2) << " frames held at arrival, p99 " << s.reorder.p99
        << ", max " << s.reorder.max << "\n";
    const auto& q = s.queues;
    out << "queues     max switch port " << q.max_switch_queue_bytes << " B (limit " << q.switch_queue_limit
        << "), max switch buffer " << q.max_switch_buffer_bytes << " B, max host port " << q.max_host_queue_bytes
        << " B" << (q.pfc_pauses > 0 ? ", " + std::to_string(q.pfc_pauses) + " PFC pauses" : std::string()) << "\n";
    if (s.run.roce) {
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
        if (s.queues.pfc_paused_at_end > 0) {
            out << "note       " << s.queues.pfc_paused_at_end
                << " ports were paused with packets queued when the run stopped: a PFC deadlock (cyclic buffer "
                   "dependency among the candidate paths; docs/testbed.md, PFC)\n";
        }
    }
    if (s.waits.flow_table > 0 || s.engines.data_drop_flow_table_full > 0) {
        out << "note       engine flow tables were full (" << s.waits.flow_table << " first frames held back, "
            << s.engines.data_drop_flow_table_full << " DATA dropped at receivers): raise tables.flow_capacity\n";
    }
    if (s.engines.data_drop_beyond_window > 0) {
        out << "note       " << s.engines.data_drop_beyond_window
            << " DATA beyond a receiver's window: a receiver forgot a live flow (4 x engine.flow_idle_us "
               "without DATA); such a flow may never complete\n";
    }
    if (s.waits.frame_pool > 0) {
        out << "note       hosts waited " << s.waits.frame_pool
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

} // namespace laps::fabric
