#include "app/control/stats.hpp"

#include <rte_ethdev.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

namespace laps::app {

namespace {

void line(const std::string& key, std::uint64_t value)
{
    std::printf("%s: %llu\n", key.c_str(), static_cast<unsigned long long>(value));
}

double per_second(std::uint64_t from, std::uint64_t to, common::time_ns dt)
{
    return dt > 0 ? static_cast<double>(to - from) * 1e9 / static_cast<double>(dt) : 0.0;
}

} // namespace

live_sample sample(const instance& inst, common::time_ns now)
{
    constexpr std::size_t host_rx = common::counter_index(pipeline::engine_counter_list, "host_rx");
    constexpr std::size_t fabric_rx = common::counter_index(pipeline::engine_counter_list, "fabric_rx");
    constexpr std::size_t data_sent = common::counter_index(pipeline::engine_counter_list, "data_sent");
    constexpr std::size_t data_delivered = common::counter_index(pipeline::engine_counter_list, "data_delivered");
    static_assert(std::max({host_rx, fabric_rx, data_sent, data_delivered}) < pipeline::engine_counter_list.size());
    live_sample s;
    s.at = now;
    s.host_rx = inst.published_engine(host_rx);
    s.fabric_rx = inst.published_engine(fabric_rx);
    s.data_sent = inst.published_engine(data_sent);
    s.data_delivered = inst.published_engine(data_delivered);
    for (std::size_t i = 0; i < inst.tracked_pids().size(); ++i) {
        s.per_path.push_back(inst.published_path(i));
    }
    return s;
}

void print_periodic(const instance& inst, const live_sample& before, const live_sample& now)
{
    const common::time_ns dt = now.at - before.at;
    std::string paths;
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < now.per_path.size(); ++i) {
        total += now.per_path[i] - (i < before.per_path.size() ? before.per_path[i] : 0);
    }
    for (std::size_t i = 0; i < now.per_path.size() && i < 8; ++i) {
        const std::uint64_t d = now.per_path[i] - (i < before.per_path.size() ? before.per_path[i] : 0);
        char buf[48];
        std::snprintf(buf, sizeof buf, " pid%u %.0f%%", static_cast<unsigned>(inst.tracked_pids()[i]),
                      total > 0 ? 100.0 * static_cast<double>(d) / static_cast<double>(total) : 0.0);
        paths += buf;
    }
    std::printf("laps: stats %s: host rx %.3f Mpps, fabric rx %.3f Mpps, DATA sent %.3f Mpps, delivered %.3f Mpps;"
                " DATA per path:%s\n",
                inst.name().c_str(), per_second(before.host_rx, now.host_rx, dt) / 1e6,
                per_second(before.fabric_rx, now.fabric_rx, dt) / 1e6,
                per_second(before.data_sent, now.data_sent, dt) / 1e6,
                per_second(before.data_delivered, now.data_delivered, dt) / 1e6, paths.empty() ? " -" : paths.c_str());
    std::fflush(stdout);
}

void print_final(const instance& inst, double seconds)
{
    const std::string p = inst.name();
    std::printf("%s.run.seconds: %.6f\n", p.c_str(), seconds);
    std::printf("%s.run.workers: %zu\n", p.c_str(), inst.worker_count());

    pipeline::engine_counters sum{};
    std::array<std::uint64_t, wire::parse_error_count> parse{};
    std::array<std::uint64_t, wire::encap_error_count> encap{};
    std::vector<std::uint64_t> per_path;
    std::vector<std::int64_t> latency_min;
    std::vector<std::uint64_t> latency_samples; // ACKs each minimum is over, summed over workers
    std::uint64_t received = 0;
    for (std::size_t w = 0; w < inst.worker_count(); ++w) {
        const auto& wk = inst.worker_at(w);
        const auto& e = wk.engine();
        pipeline::accumulate(sum, e.counters());
        for (std::size_t i = 0; i < parse.size(); ++i) {
            parse[i] += e.parse_errors()[i];
        }
        for (std::size_t i = 0; i < encap.size(); ++i) {
            encap[i] += e.encap_errors()[i];
        }
        const auto& pp = e.packets_per_path();
        const auto& ps = e.path_stats();
        latency_min.resize(std::max(latency_min.size(), ps.size()), std::numeric_limits<std::int64_t>::max());
        latency_samples.resize(latency_min.size(), 0);
        for (std::size_t i = 0; i < ps.size(); ++i) {
            latency_min[i] = std::min(latency_min[i], ps[i].latency_min_ns);
            latency_samples[i] += ps[i].latency_samples;
        }
        per_path.resize(std::max(per_path.size(), pp.size()), 0);
        for (std::size_t i = 0; i < pp.size(); ++i) {
            per_path[i] += pp[i];
        }
        const auto& wc = wk.counters();
        received += wc.rx_host + wc.rx_fabric;
        const std::string wp = p + ".worker" + std::to_string(w) + ".";
        for (const auto& c : worker_counter_list) {
            line(wp + std::string(c.name), wc.*c.field);
        }
        if (inst.worker_count() > 1) {
            // Each worker's own engine (the sums follow): its non-zero
            // counters and its DATA per pid.
            for (const auto& c : pipeline::engine_counter_list) {
                if (e.counters().*c.field != 0) {
                    line(wp + "engine." + std::string(c.name), e.counters().*c.field);
                }
            }
            for (std::size_t pid = 0; pid < pp.size(); ++pid) {
                if (pp[pid] != 0) {
                    line(wp + "path." + std::to_string(pid) + ".data_sent", pp[pid]);
                }
            }
        }
    }
    // Every engine counter, zeros too: scripts can rely on the names.
    for (const auto& c : pipeline::engine_counter_list) {
        line(p + ".engine." + std::string(c.name), sum.*c.field);
    }
    for (std::size_t i = 1; i < parse.size(); ++i) {
        if (parse[i] != 0) {
            line(p + ".parse." + std::string(wire::to_string(static_cast<wire::parse_error>(i))), parse[i]);
        }
    }
    for (std::size_t i = 1; i < encap.size(); ++i) {
        if (encap[i] != 0) {
            line(p + ".encap." + std::string(wire::to_string(static_cast<wire::encap_error>(i))), encap[i]);
        }
    }
    for (std::size_t pid = 0; pid < per_path.size(); ++pid) {
        if (per_path[pid] != 0) {
            line(p + ".path." + std::to_string(pid) + ".data_sent", per_path[pid]);
        }
    }
    // The smallest latency each path recorded (what baseVal must not be
    // below, docs/app.md "A baseline that matches the ports") and over how
    // many ACKs: the baseline is judged after baseline_watch::min_samples.
    for (std::size_t pid = 0; pid < latency_min.size(); ++pid) {
        if (latency_min[pid] != std::numeric_limits<std::int64_t>::max()) {
            const std::string k = p + ".path." + std::to_string(pid);
            line(k + ".latency_min_ns", static_cast<std::uint64_t>(latency_min[pid]));
            line(k + ".latency_samples", latency_samples[pid]);
        }
    }
    for (const port* port : {&inst.host_port(), &inst.fabric_port()}) {
        rte_eth_stats st{};
        if (rte_eth_stats_get(port->id(), &st) != 0) {
            continue;
        }
        const std::string k = p + ".port." + (port == &inst.host_port() ? "host" : "fabric") + ".";
        line(k + "ipackets", st.ipackets);
        line(k + "opackets", st.opackets);
        line(k + "ibytes", st.ibytes);
        line(k + "obytes", st.obytes);
        line(k + "imissed", st.imissed);
        line(k + "ierrors", st.ierrors);
        line(k + "oerrors", st.oerrors);
        line(k + "rx_nombuf", st.rx_nombuf);
    }
    const double workers = static_cast<double>(inst.worker_count());
    const double rate = seconds > 0 ? static_cast<double>(received) / seconds : 0.0;
    std::printf("%s.run.received_packets: %llu\n", p.c_str(), static_cast<unsigned long long>(received));
    std::printf("%s.run.mpps: %.4f\n", p.c_str(), rate / 1e6);
    std::printf("%s.run.mpps_per_worker: %.4f\n", p.c_str(), rate / 1e6 / workers);
    std::fflush(stdout);
}

void print_link(const link& l)
{
    // Every ordered pair of two instances; of more, the pairs that carried
    // or dropped anything.
    for (std::size_t from = 0; from < l.sides(); ++from) {
        for (std::size_t to = 0; to < l.sides(); ++to) {
            const link_counters& c = l.counters(from, to);
            if (from == to || (l.sides() > 2 && !c.any())) {
                continue;
            }
            const std::string k = "link." + l.side_name(from) + "_to_" + l.side_name(to) + ".";
            line(k + "forwarded", c.forwarded);
            line(k + "drop_full", c.drop_full);
            line(k + "drop_no_mbuf", c.drop_no_mbuf);
            line(k + "drop_loss", c.drop_loss);
            line(k + "drop_port_full", c.drop_port_full);
        }
    }
    if (l.sides() > 2) {
        line("link.drop_no_route", l.drop_no_route());
    }
    std::fflush(stdout);
}

} // namespace laps::app
