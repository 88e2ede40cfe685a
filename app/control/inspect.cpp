#include "app/control/inspect.hpp"

#include <algorithm>
#include <map>
#include <mutex>

namespace laps::app {

namespace {

// set index -> destination, from the instance's PST (iterated under the
// tables' control mutex: rte_hash iteration is not concurrent with writers).
std::map<std::uint32_t, tables::address> destinations_by_set(const tables::shared_tables& t)
{
    std::map<std::uint32_t, tables::address> out;
    t.destinations().for_each([&](const tables::address& a, std::uint32_t set) { out.emplace(set, a); });
    return out;
}

} // namespace

std::vector<pst_view> inspect_pst(instance& inst)
{
    std::vector<pst_view> rows;
    auto& t = inst.tables();
    const std::lock_guard<std::mutex> lock(t.control_mutex());
    for (const auto& [set, dst] : destinations_by_set(t)) {
        pst_view v;
        v.destination = dst;
        const auto& s = t.paths().set(set);
        v.pids.assign(s.members().begin(), s.members().end());
        v.fabric_ipv4 = s.fabric_ipv4;
        rows.push_back(std::move(v));
    }
    return rows;
}

std::vector<pit_view> inspect_pit(instance& inst)
{
    std::vector<pit_view> rows;
    auto& t = inst.tables();
    const std::lock_guard<std::mutex> lock(t.control_mutex());
    const auto dst = destinations_by_set(t);
    const auto& pit = t.paths().paths();
    for (std::size_t pid = 0; pid < pit.capacity(); ++pid) {
        const auto& p = pit[static_cast<tables::path_id>(pid)];
        if (!pit.contains(static_cast<tables::path_id>(pid))) {
            continue;
        }
        pit_view v;
        v.pid = static_cast<tables::path_id>(pid);
        if (const auto it = dst.find(p.set_index()); it != dst.end()) {
            v.destination = it->second;
        }
        v.valid = p.usable();
        v.base_ns = p.base_ns;
        v.uncongested_ns = p.uncongested_ns;
        v.real_ns = p.real();
        v.measured_at = p.time();
        v.hops = p.hop_count;
        v.anchors.assign(p.anchors.begin(), p.anchors.begin() + p.anchor_count);
        rows.push_back(std::move(v));
    }
    return rows;
}

std::vector<path_stats_view> inspect_paths(instance& inst)
{
    std::vector<path_stats_view> rows;
    {
        auto& t = inst.tables();
        const std::lock_guard<std::mutex> lock(t.control_mutex());
        const auto& pit = t.paths().paths();
        for (std::size_t pid = 0; pid < pit.capacity(); ++pid) {
            if (!pit.contains(static_cast<tables::path_id>(pid))) {
                continue;
            }
            const auto& p = pit[static_cast<tables::path_id>(pid)];
            path_stats_view v;
            v.pid = static_cast<tables::path_id>(pid);
            v.valid = p.usable();
            v.real_ns = p.real();
            v.base_ns = p.base_ns;
            rows.push_back(v);
        }
    }
    // Per-worker counters, taken by each worker between its bursts.
    for (std::size_t w = 0; w < inst.worker_count(); ++w) {
        inst.worker_at(w).control([&](pipeline::engine& e) {
            for (auto& r : rows) {
                r.packets += e.packets_per_path()[r.pid];
                r.bytes += e.path_stats()[r.pid].bytes;
                r.probes += e.path_stats()[r.pid].probes;
                r.losses += e.path_stats()[r.pid].losses;
            }
        });
    }
    std::uint64_t total = 0;
    for (const auto& r : rows) {
        total += r.packets;
    }
    for (auto& r : rows) {
        r.share = total == 0 ? 0.0 : static_cast<double>(r.packets) / static_cast<double>(total);
    }
    return rows;
}

std::vector<flow_view> inspect_flows(instance& inst, std::uint32_t max)
{
    std::vector<flow_view> rows;
    for (std::size_t w = 0; w < inst.worker_count() && rows.size() < max; ++w) {
        inst.worker_at(w).control([&](pipeline::engine& e) {
            e.for_each_flow(max - static_cast<std::uint32_t>(rows.size()), [&](const pipeline::engine::flow_view& f) {
                flow_view v;
                v.worker = static_cast<std::uint16_t>(w);
                v.flow_id = f.flow_id;
                v.key = *f.key;
                v.rate_bps = f.rate_bps;
                v.expected_bps = f.expected_bps;
                v.in_flight = f.in_flight;
                v.queued = f.queued;
                v.lost_pending = f.lost_pending;
                rows.push_back(v);
            });
        });
    }
    return rows;
}

engine_view inspect_engine(instance& inst)
{
    engine_view out;
    out.parse_errors.assign(wire::parse_error_count, 0);
    for (std::size_t w = 0; w < inst.worker_count(); ++w) {
        inst.worker_at(w).control([&](pipeline::engine& e) {
            pipeline::accumulate(out.counters, e.counters());
            for (std::size_t i = 0; i < wire::parse_error_count; ++i) {
                out.parse_errors[i] += e.parse_errors()[i];
            }
            out.flows += e.active_flows();
            out.receive_flows += e.active_receive_flows();
        });
    }
    return out;
}

selection_view inspect_selection(instance& inst)
{
    selection_view out;
    inst.worker_at(0).control([&](pipeline::engine& e) {
        out.selection = e.selection();
        out.increase_stages = e.config().algo.congestion.aimd.increase_stages;
        out.cc = e.config().algo.congestion.aimd.variant;
    });
    auto& t = inst.tables();
    const std::lock_guard<std::mutex> lock(t.control_mutex());
    out.destinations = t.destinations().size();
    const auto& pit = t.paths().paths();
    for (std::size_t pid = 0; pid < pit.capacity(); ++pid) {
        out.paths += pit.contains(static_cast<tables::path_id>(pid)) ? 1 : 0;
    }
    return out;
}

std::string describe(const wire::flow_key& key)
{
    // Appends, not operator+ chains: GCC 12 -O3 warns falsely (-Wrestrict) on those.
    const bool ports = key.kind != wire::flow_kind::three_tuple;
    std::string s;
    const auto endpoint = [&s, ports](const tables::address& a, std::uint16_t port) {
        if (a.is_ipv4()) {
            s += a.to_string();
        } else {
            s += '[';
            s += a.to_string();
            s += ']';
        }
        if (ports) {
            s += ':';
            s += std::to_string(port);
        }
    };
    endpoint(key.src, key.src_port);
    s += " -> ";
    endpoint(key.dst, key.dst_port);
    switch (key.protocol) {
    case 6:
        s += " tcp";
        break;
    case 17:
        s += " udp";
        break;
    default:
        s += " proto ";
        s += std::to_string(key.protocol);
    }
    if (key.kind == wire::flow_kind::rocev2) {
        char qp[24];
        std::snprintf(qp, sizeof qp, " rocev2 qp 0x%06x", key.qp);
        s += qp;
    }
    return s;
}

} // namespace laps::app
