#include "fabric/fairness.hpp"

#include "common/time.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace laps::fabric {

double jain_index(std::span<const double> x) noexcept
{
    double sum = 0;
    double squares = 0;
    for (const double v : x) {
        sum += v;
        squares += v * v;
    }
    return squares > 0 ? sum * sum / (static_cast<double>(x.size()) * squares) : 0.0;
}

namespace {

// Candidate paths per (sender, receiver) from the senders' PST rows.
std::map<std::pair<topology::node_id, topology::node_id>, std::uint32_t> path_counts(const simulation& sim)
{
    const auto& topo = sim.topology();
    std::map<std::pair<topology::node_id, topology::node_id>, std::uint32_t> counts;
    for (const auto& h : sim.hosts()) {
        for (const auto& row : h.table.pst) {
            if (const auto dst = topo.host_by_address(row.destination)) {
                counts[{h.id, *dst}] = static_cast<std::uint32_t>(row.pids.size());
            }
        }
    }
    return counts;
}

// What one receiver of an item takes in: its flows' bytes, and the shortest
// time any of them needs to reach it besides its own serialisation (links'
// delays, store-and-forward of its last frame).
struct receiver_load {
    std::uint64_t bytes = 0;
    time_ns latency = std::numeric_limits<time_ns>::max();

    void add(std::uint64_t flow_bytes, time_ns ideal_fct, double source_bps)
    {
        bytes += flow_bytes;
        latency = std::min(latency, ideal_fct - common::serialization_ns(flow_bytes, source_bps));
    }
};

// The largest over the receivers of: every byte into a receiver over the sum
// of its ports' rates, after the shortest latency of its flows (nothing
// arrives sooner). Each flow's latency counts once, not once per flow.
time_ns bound_over(const std::map<topology::node_id, receiver_load>& into, const topology::fabric& topo)
{
    time_ns bound = 0;
    for (const auto& [dst, load] : into) {
        double capacity_bps = 0;
        for (const auto& a : topo.neighbours(dst)) {
            capacity_bps += topo.link_at(a.link).rate_gbps * 1e9;
        }
        bound = std::max(bound, common::serialization_ns(load.bytes, capacity_bps) + std::max<time_ns>(0, load.latency));
    }
    return bound;
}

} // namespace

std::vector<fairness_summary> summarize_fairness(const simulation& sim)
{
    const auto& topo = sim.topology();
    const std::size_t items = sim.config().traffic.size();
    std::vector<fairness_summary> out(items);
    std::vector<std::vector<double>> normalised(items);
    std::vector<time_ns> first_start(items, -1);
    std::vector<time_ns> last_end(items, -1);
    std::vector<time_ns> slowest_fct(items, -1);
    std::vector<std::size_t> incomplete(items, 0);
    std::vector<std::map<topology::node_id, receiver_load>> host_bytes_into(items);
    std::vector<std::map<topology::node_id, receiver_load>> wire_bytes_into(items);
    std::vector<std::map<std::uint32_t, path_count_group>> groups(items);
    const auto counts = path_counts(sim);

    for (const auto& f : sim.flows()) {
        const std::uint32_t i = f.spec.tag;
        auto& s = out[i];
        first_start[i] = first_start[i] < 0 ? f.spec.start : std::min(first_start[i], f.spec.start);
        const double source_bps = sim.hosts()[f.spec.src].rate_bps;
        host_bytes_into[i][f.spec.dst].add(f.wire_bytes, f.ideal_ns, source_bps);
        if (!f.complete()) {
            ++incomplete[i];
            continue;
        }
        last_end[i] = std::max(last_end[i], f.end);
        wire_bytes_into[i][f.spec.dst].add(f.first_wire_bytes, sim.ideal_wire_fct(f), source_bps);
        const double fct_us = static_cast<double>(f.fct()) / 1000.0;
        normalised[i].push_back(static_cast<double>(f.ideal_ns) / static_cast<double>(std::max<time_ns>(1, f.fct())));
        if (f.fct() > slowest_fct[i]) {
            slowest_fct[i] = f.fct();
            s.slowest = std::string(topo.name(f.spec.src)) + "->" + std::string(topo.name(f.spec.dst));
        }
        const auto c = counts.find({f.spec.src, f.spec.dst});
        auto& g = groups[i][c == counts.end() ? 0 : c->second];
        ++g.flows;
        g.mean_fct_us += fct_us;
        g.max_fct_us = std::max(g.max_fct_us, fct_us);
    }
    for (std::size_t i = 0; i < items; ++i) {
        auto& s = out[i];
        s.jain = jain_index(normalised[i]);
        s.bound_ns = bound_over(host_bytes_into[i], topo);
        if (first_start[i] >= 0 && incomplete[i] == 0) {
            s.completion_ns = last_end[i] - first_start[i];
            s.bound_ratio = s.bound_ns > 0 ? static_cast<double>(s.completion_ns) / static_cast<double>(s.bound_ns) : 0;
            s.wire_bound_ns = bound_over(wire_bytes_into[i], topo);
            s.wire_bound_ratio =
                s.wire_bound_ns > 0 ? static_cast<double>(s.completion_ns) / static_cast<double>(s.wire_bound_ns) : 0;
        }
        for (auto& [paths, g] : groups[i]) {
            g.paths = paths;
            g.mean_fct_us /= static_cast<double>(std::max<std::size_t>(1, g.flows));
            s.by_paths.push_back(g);
        }
    }
    return out;
}

} // namespace laps::fabric
