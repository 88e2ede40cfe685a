// The CSV files of a run (results.hpp): flows, paths, links, reorder.
#include "fabric/results.hpp"

#include <map>
#include <ostream>

namespace laps::fabric {

void write_flows_csv(std::ostream& out, const simulation& sim)
{
    const auto& topo = sim.topology();
    out << "flow,src,dst,traffic,bytes,frames,start_ns,end_ns,fct_ns,ideal_fct_ns,ideal_wire_fct_ns,slowdown,retransmissions,completed\n";
    for (const auto& f : sim.flows()) {
        out << f.id << ',' << topo.name(f.spec.src) << ',' << topo.name(f.spec.dst) << ',' << f.spec.tag << ','
            << f.spec.bytes << ',' << f.frames << ',' << f.spec.start << ',';
        if (f.complete()) {
            out << f.end << ',' << f.fct() << ',' << f.ideal_ns << ',' << sim.ideal_wire_fct(f) << ','
                << fixed(static_cast<double>(f.fct()) / static_cast<double>(std::max<time_ns>(1, f.ideal_ns)), 4);
        } else {
            out << ",," << f.ideal_ns << ",,"; // the wire bound: unknown until every frame is out
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
    for (std::size_t b = 0; b < s.reorder.histogram.size(); ++b) {
        out << b << (b + 1 == s.reorder.histogram.size() ? "+" : "") << ',' << s.reorder.histogram[b] << '\n';
    }
}

} // namespace laps::fabric
