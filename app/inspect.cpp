#include "app/inspect.hpp"

#include <algorithm>
#include <map>

namespace laps::app {

namespace {

// set index -> (destination, fabric address), from one engine.
std::map<std::uint32_t, std::pair<tables::address, std::uint32_t>> destinations_by_set(const pipeline::engine& e)
{
    std::map<std::uint32_t, std::pair<tables::address, std::uint32_t>> out;
    e.pst().for_each([&](const tables::address& a, std::uint32_t set) { out.emplace(set, std::make_pair(a, 0u)); });
    return out;
}

} // namespace

std::vector<pst_view> inspect_pst(instance& inst)
{
    std::vector<pst_view> rows;
    inst.worker_at(0).control([&](pipeline::engine& e) {
        for (const auto& [set, dst] : destinations_by_set(e)) {
            pst_view v;
            v.destination = dst.first;
            const auto& s = e.paths().set(set);
            v.pids.assign(s.members().begin(), s.members().end());
            v.fabric_ipv4 = e.fabric_ipv4_of(set);
            rows.push_back(std::move(v));
        }
    });
    return rows;
}

std::vector<pit_view> inspect_pit(instance& inst)
{
    std::vector<pit_view> rows;
    inst.worker_at(0).control([&](pipeline::engine& e) {
        const auto dst = destinations_by_set(e);
        const auto& pit = e.paths().paths();
        for (std::size_t pid = 0; pid < pit.capacity(); ++pid) {
            const auto& p = pit[static_cast<tables::path_id>(pid)];
            if (!p.present) {
                continue;
            }
            pit_view v;
            v.pid = static_cast<tables::path_id>(pid);
            if (const auto it = dst.find(p.set); it != dst.end()) {
                v.destination = it->second.first;
            }
            v.valid = p.valid;
            v.base_ns = p.base_ns;
            v.uncongested_ns = p.uncongested_ns;
            v.real_ns = p.real_ns;
            v.measured_at = p.measured_at;
            v.hops = p.hop_count;
            v.anchors.assign(p.anchors.begin(), p.anchors.begin() + p.anchor_count);
            rows.push_back(std::move(v));
        }
    });
    return rows;
}

std::vector<path_stats_view> inspect_paths(instance& inst)
{
    std::vector<path_stats_view> rows;
    for (std::size_t w = 0; w < inst.worker_count(); ++w) {
        inst.worker_at(w).control([&](pipeline::engine& e) {
            const auto& pit = e.paths().paths();
            std::size_t row = 0;
            for (std::size_t pid = 0; pid < pit.capacity(); ++pid) {
                const auto& p = pit[static_cast<tables::path_id>(pid)];
                if (!p.present) {
                    continue;
                }
                if (w == 0) {
                    path_stats_view v;
                    v.pid = static_cast<tables::path_id>(pid);
                    v.valid = p.valid;
                    v.real_ns = p.real_ns;
                    v.base_ns = p.base_ns;
                    rows.push_back(v);
                }
                if (row < rows.size() && rows[row].pid == pid) {
                    rows[row].packets += e.packets_per_path()[pid];
                    rows[row].bytes += e.path_stats()[pid].bytes;
                    rows[row].probes += e.path_stats()[pid].probes;
                    rows[row].losses += e.path_stats()[pid].losses;
                }
                ++row;
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
            for (const auto& c : pipeline::engine_counter_list) {
                if (c.name == "reorder_held_max") {
                    out.counters.*c.field = std::max(out.counters.*c.field, e.counters().*c.field);
                } else {
                    out.counters.*c.field += e.counters().*c.field;
                }
            }
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
        out.destinations = e.pst().size();
        std::size_t paths = 0;
        const auto& pit = e.paths().paths();
        for (std::size_t pid = 0; pid < pit.capacity(); ++pid) {
            paths += pit[static_cast<tables::path_id>(pid)].present ? 1 : 0;
        }
        out.paths = paths;
    });
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
