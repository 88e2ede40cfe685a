#include "config/laps_config.hpp"

#include <cmath>
#include <set>
#include <sstream>
#include <unordered_map>

namespace laps::config {

namespace {

// A duration key given in `unit_ns` units (`_us`: 1e3, `_ms`: 1e6), range
// checked in those units, kept in ns (rounded). Absent: `out` unchanged.
void optional_duration(const reader& r, const YAML::Node& parent, std::string_view parent_key, std::string_view name,
                       double unit_ns, double lo, double hi, common::time_ns& out)
{
    if (const auto x = parent[std::string(name)]) {
        const std::string key = std::string(parent_key) + "." + std::string(name);
        out = static_cast<common::time_ns>(std::llround(r.number(x, key, lo, hi) * unit_ns));
    }
}

std::string format_number(double v)
{
    std::ostringstream out;
    out << v;
    return out.str();
}

void parse_host(const reader& r, const YAML::Node& n, host_section& out)
{
    r.expect_map(n, "host", {"id", "address"});
    if (const auto id = n["id"]) {
        out.id = static_cast<std::uint32_t>(r.integer(id, "host.id", 0, 0xffffffffLL));
    }
    if (const auto a = n["address"]) {
        const auto text = r.string(a, "host.address");
        out.address = tables::address::parse(text);
        if (!out.address) {
            r.fail(a, "host.address", "'" + text + "' is not an IPv4 or IPv6 address");
        }
    }
}

// selection.reps / hopper / flowbender / selective (policy/, seeds 001, 002, 004).
void parse_other_policies(const reader& r, const YAML::Node& n, selection_section& out)
{
    if (const auto v = n["reps"]) {
        r.expect_map(v, "selection.reps", {"cache_size", "freeze_us"});
        r.optional_integer(v, "selection.reps", "cache_size", out.reps_cache_size, 1, policy::reps::max_cache);
        if (const auto f = v["freeze_us"]) {
            out.reps_freeze_ns = static_cast<common::time_ns>(r.number(f, "selection.reps.freeze_us", 0.0, 3.6e9) * 1000.0);
        }
    }
    if (const auto v = n["hopper"]) {
        parse_hopper_section(r, v, "selection.hopper", out.hopper);
    }
    if (const auto v = n["flowbender"]) {
        parse_flowbender_section(r, v, "selection.flowbender", out.flowbender);
    }
    if (const auto v = n["selective"]) {
        r.expect_map(v, "selection.selective", {"elephant_bytes", "dscp"});
        r.optional_integer(v, "selection.selective", "elephant_bytes", out.elephant_bytes, 0, std::int64_t{1} << 50);
        if (const auto d = v["dscp"]) {
            // Traffic the application marks as safe to spray (seed 004: a DSCP rule).
            r.expect_list(d, "selection.selective.dscp");
            out.elephant_dscp = 0;
            for (std::size_t i = 0; i < d.size(); ++i) {
                const auto value = r.integer(d[i], "selection.selective.dscp[" + std::to_string(i) + "]", 0, 63);
                out.elephant_dscp |= std::uint64_t{1} << value;
            }
        }
    }
}

void parse_selection(const reader& r, const YAML::Node& n, selection_section& out)
{
    r.expect_map(n, "selection",
                 {"policy", "beta", "probing", "seed", "probe_backoff_cap_us", "reps", "hopper", "flowbender",
                  "selective"});
    if (const auto p = n["policy"]) {
        out.policy = r.choice_of(p, "selection.policy", softmax::policy_registry);
    }
    parse_other_policies(r, n, out);
    if (const auto b = n["beta"]) {
        r.expect_map(b, "selection.beta", {"mode", "per_us", "alpha"});
        const auto mode = r.choice_of(r.require(b, "selection.beta", "mode"), "selection.beta.mode",
                                      softmax::beta_mode_names);
        if (mode == softmax::beta_mode::fixed) {
            if (b["alpha"]) {
                r.fail(b["alpha"], "selection.beta.alpha", "applies to mode normalized, not fixed");
            }
            const double per_us =
                r.number(r.require(b, "selection.beta", "per_us"), "selection.beta.per_us", 0.0, 1e6);
            out.beta = softmax::beta_params::fixed_per_us(per_us);
        } else {
            if (b["per_us"]) {
                r.fail(b["per_us"], "selection.beta.per_us", "applies to mode fixed, not normalized");
            }
            double alpha = 1.0;
            r.optional_number(b, "selection.beta", "alpha", alpha, 0.0, 1e6);
            out.beta = softmax::beta_params::normalized_alpha(alpha);
        }
    }
    r.optional_boolean(n, "selection", "probing", out.probing);
    if (const auto c = n["probe_backoff_cap_us"]) {
        out.probe_backoff_cap_ns =
            static_cast<common::time_ns>(r.number(c, "selection.probe_backoff_cap_us", 1.0, 3.6e9) * 1000.0);
    }
    r.optional_integer(n, "selection", "seed", out.seed, 0, std::numeric_limits<std::int64_t>::max());
}

void parse_fair(const reader& r, const YAML::Node& n, congestion::fair_params& out)
{
    r.expect_map(n, "congestion.fair",
                 {"target_queue_us", "increase_gbps", "interval_us", "decrease_gain", "max_decrease",
                  "flow_scaling_us", "coupled_paths"});
    optional_duration(r, n, "congestion.fair", "target_queue_us", 1e3, 0.0, 1e6, out.target_queue_ns);
    double increase_gbps = out.increase_bps / 1e9;
    r.optional_number(n, "congestion.fair", "increase_gbps", increase_gbps, 0.0, 1e4, true);
    out.increase_bps = increase_gbps * 1e9;
    optional_duration(r, n, "congestion.fair", "interval_us", 1e3, 0.001, 1e6, out.interval_ns);
    r.optional_number(n, "congestion.fair", "decrease_gain", out.decrease_gain, 0.0, 1.0, true);
    r.optional_number(n, "congestion.fair", "max_decrease", out.max_decrease, 0.0, 1.0, true);
    optional_duration(r, n, "congestion.fair", "flow_scaling_us", 1e3, 0.0, 1e6, out.flow_scaling_ns);
    r.optional_boolean(n, "congestion.fair", "coupled_paths", out.coupled_paths);
}

void parse_credit(const reader& r, const YAML::Node& n, congestion::credit_params& out)
{
    r.expect_map(n, "congestion.credit",
                 {"unscheduled_kb", "window_kb", "rate_fraction", "downlink_gbps", "ports", "fallback_us",
                  "lossless_fabric"});
    double unscheduled_kb = out.unscheduled_bytes / 1024.0;
    r.optional_number(n, "congestion.credit", "unscheduled_kb", unscheduled_kb, 0.0, 1e6);
    out.unscheduled_bytes = static_cast<std::uint32_t>(unscheduled_kb * 1024.0);
    double window_kb = out.window_bytes / 1024.0;
    r.optional_number(n, "congestion.credit", "window_kb", window_kb, 0.0, 1e6);
    out.window_bytes = static_cast<std::uint32_t>(window_kb * 1024.0);
    if (out.window_bytes < out.unscheduled_bytes) {
        r.fail(n["window_kb"] ? n["window_kb"] : n, "congestion.credit.window_kb",
               "below congestion.credit.unscheduled_kb (" + format_number(unscheduled_kb) + ")");
    }
    r.optional_number(n, "congestion.credit", "rate_fraction", out.rate_fraction, 0.01, 1.0);
    double downlink_gbps = out.downlink_bps / 1e9;
    r.optional_number(n, "congestion.credit", "downlink_gbps", downlink_gbps, 0.0, 1e5);
    out.downlink_bps = downlink_gbps * 1e9;
    r.optional_integer(n, "congestion.credit", "ports", out.ports, 1, congestion::max_credit_ports);
    optional_duration(r, n, "congestion.credit", "fallback_us", 1e3, 1.0, 1e9, out.fallback_ns);
    if (n["lossless_fabric"]) {
        bool lossless = false;
        r.optional_boolean(n, "congestion.credit", "lossless_fabric", lossless);
        out.lossless_fabric = lossless;
    }
}

void parse_congestion(const reader& r, const YAML::Node& n, congestion_section& out)
{
    r.expect_map(n, "congestion",
                 {"increase_stages", "rate_floor_gbps", "rate_cap_gbps", "pacer_burst_bytes", "min_increase_gbps",
                  "increase_window", "cc", "fair", "credit"});
    if (const auto v = n["cc"]) {
        out.aimd.variant = r.choice_of(v, "congestion.cc", congestion::cc_variant_names);
    }
    if (const auto f = n["fair"]) {
        parse_fair(r, f, out.aimd.fair);
    }
    if (const auto c = n["credit"]) {
        parse_credit(r, c, out.aimd.credit);
    }
    r.optional_integer(n, "congestion", "increase_stages", out.aimd.increase_stages, 0, 64);
    double min_increase_gbps = out.aimd.min_increase_bps / 1e9;
    r.optional_number(n, "congestion", "min_increase_gbps", min_increase_gbps, 0.0, 1e4);
    out.aimd.min_increase_bps = min_increase_gbps * 1e9;
    if (const auto w = n["increase_window"]) {
        out.aimd.increase_window_T = r.choice(w, "congestion.increase_window", {"2t", "2T"}) == "2T";
    }
    double floor_gbps = out.aimd.floor_bps / 1e9;
    double cap_gbps = out.aimd.cap_bps / 1e9;
    r.optional_number(n, "congestion", "rate_floor_gbps", floor_gbps, 0.0, 1e4, true);
    r.optional_number(n, "congestion", "rate_cap_gbps", cap_gbps, 0.0, 1e4, true);
    if (floor_gbps > cap_gbps) {
        r.fail(n["rate_floor_gbps"] ? n["rate_floor_gbps"] : n, "congestion.rate_floor_gbps",
               "floor " + format_number(floor_gbps) + " Gb/s is above the cap " + format_number(cap_gbps) + " Gb/s");
    }
    out.aimd.floor_bps = floor_gbps * 1e9;
    out.aimd.cap_bps = cap_gbps * 1e9;
    // At least one full-size frame, or it could never leave the pacer (the
    // engine checks it against the fabric MTU).
    r.optional_integer(n, "congestion", "pacer_burst_bytes", out.pacer_burst_bytes, 1600, 1 << 30);
}

void parse_retransmit(const reader& r, const YAML::Node& n, retransmit_section& out)
{
    r.expect_map(n, "retransmit",
                 {"window_packets", "min_timeout_us", "max_timeout_us", "rtt_timeout", "initial_timeout_us"});
    // At most 2^15: DATA carries seq - oldest unacknowledged in 16 bits.
    r.optional_integer(n, "retransmit", "window_packets", out.window_packets, 2, 1 << 15);
    if (const auto t = n["min_timeout_us"]) {
        out.min_timeout_ns =
            static_cast<common::time_ns>(r.number(t, "retransmit.min_timeout_us", 0.0, 1e9) * 1000.0);
    }
    if (const auto t = n["max_timeout_us"]) {
        out.max_timeout_ns =
            static_cast<common::time_ns>(r.number(t, "retransmit.max_timeout_us", 1.0, 1e9) * 1000.0);
        if (out.max_timeout_ns < out.min_timeout_ns) {
            r.fail(t, "retransmit.max_timeout_us", "below retransmit.min_timeout_us (" +
                                                       std::to_string(out.min_timeout_ns / 1000) + " us)");
        }
    }
    r.optional_boolean(n, "retransmit", "rtt_timeout", out.rtt_timeout);
    if (const auto t = n["initial_timeout_us"]) {
        out.initial_timeout_ns =
            static_cast<common::time_ns>(r.number(t, "retransmit.initial_timeout_us", 0.0, 1e9) * 1000.0);
    }
}

void parse_tables(const reader& r, const YAML::Node& n, tables_section& out)
{
    r.expect_map(n, "tables",
                 {"pst_capacity", "pit_capacity", "flow_capacity", "clocks", "pit_update_tolerance", "clock_offset",
                  "calibrate_base"});
    r.optional_boolean(n, "tables", "calibrate_base", out.calibrate_base);
    r.optional_integer(n, "tables", "pst_capacity", out.pst_capacity, 8, 1 << 26);
    r.optional_integer(n, "tables", "pit_capacity", out.pit_capacity, 1, 65536);
    r.optional_integer(n, "tables", "flow_capacity", out.flow_capacity, 8, 1 << 20);
    if (const auto c = n["clocks"]) {
        out.estimate_clock_offset = r.choice(c, "tables.clocks", {"unsynchronized", "synchronized"}) ==
                                    "unsynchronized";
    }
    if (const auto t = n["pit_update_tolerance"]) {
        out.pit_update_tolerance = r.number(t, "tables.pit_update_tolerance", 0.0, 0.25);
    }
    if (const auto c = n["clock_offset"]) {
        auto& o = out.clock_offset;
        r.expect_map(c, "tables.clock_offset", {"bucket_ms", "window_ms", "step_us", "step_samples", "max_skew_ppm"});
        optional_duration(r, c, "tables.clock_offset", "bucket_ms", 1e6, 0.001, 60'000, o.bucket_ns);
        optional_duration(r, c, "tables.clock_offset", "window_ms", 1e6, 0.001, 3'600'000, o.window_ns);
        optional_duration(r, c, "tables.clock_offset", "step_us", 1e3, 0.001, 1e9, o.step_ns);
        r.optional_integer(c, "tables.clock_offset", "step_samples", o.step_samples, 1, 1'000'000);
        r.optional_integer(c, "tables.clock_offset", "max_skew_ppm", o.max_skew_ppm, 0, 100'000);
        if (o.window_ns < o.bucket_ns) {
            r.fail(c, "tables.clock_offset.window_ms", "must be at least bucket_ms");
        }
    }
}

void parse_baseval(const reader& r, const YAML::Node& n, baseval_section& out)
{
    r.expect_map(n, "baseval", {"packet_bytes", "margin_packets", "margin_per"});
    r.optional_integer(n, "baseval", "packet_bytes", out.packet_bytes, 64, 65535);
    r.optional_integer(n, "baseval", "margin_packets", out.margin_packets, 0, 1000);
    if (const auto m = n["margin_per"]) {
        out.margin_per = r.choice_of(m, "baseval.margin_per", margin_unit_names);
    }
}

void parse_paths(const reader& r, const YAML::Node& n, const tables_section& limits, tables::table_spec& out)
{
    r.expect_map(n, "paths", {"pst", "pit"});
    // PIT first, so PST rows can be checked against it.
    std::unordered_map<tables::path_id, YAML::Node> pit_rows;
    if (const auto pit = n["pit"]) {
        r.expect_list(pit, "paths.pit");
        for (std::size_t i = 0; i < pit.size(); ++i) {
            const auto row = pit[i];
            const std::string key = "paths.pit[" + std::to_string(i) + "]";
            r.expect_map(row, key, {"pid", "base_ns", "uncongested_ns", "hops", "anchors", "valid"});
            tables::pit_row p;
            const auto pid_node = r.require(row, key, "pid");
            p.pid = static_cast<tables::path_id>(
                r.integer(pid_node, key + ".pid", 0, static_cast<std::int64_t>(limits.pit_capacity) - 1));
            if (pit_rows.contains(p.pid)) {
                r.fail(pid_node, key + ".pid",
                       "pid " + std::to_string(p.pid) + " is already defined at line " +
                           std::to_string(pit_rows[p.pid].Mark().line + 1));
            }
            pit_rows.emplace(p.pid, pid_node);
            p.base_ns = r.integer(r.require(row, key, "base_ns"), key + ".base_ns", 1, std::int64_t{1} << 47);
            p.uncongested_ns = p.base_ns;
            if (const auto u = row["uncongested_ns"]) {
                p.uncongested_ns = r.integer(u, key + ".uncongested_ns", 1, p.base_ns);
            }
            r.optional_integer(row, key, "hops", p.hop_count, 0, 255);
            r.optional_boolean(row, key, "valid", p.valid);
            if (const auto anchors = row["anchors"]) {
                r.expect_list(anchors, key + ".anchors");
                if (anchors.size() > tables::max_anchors) {
                    r.fail(anchors, key + ".anchors",
                           std::to_string(anchors.size()) + " anchors, at most " +
                               std::to_string(tables::max_anchors) + " (the SR header's limit)");
                }
                for (std::size_t a = 0; a < anchors.size(); ++a) {
                    p.anchors[a] = static_cast<std::uint32_t>(r.integer(
                        anchors[a], key + ".anchors[" + std::to_string(a) + "]", 0, 0xffffffffLL));
                }
                p.anchor_count = static_cast<std::uint8_t>(anchors.size());
            }
            out.pit.push_back(p);
        }
    }
    std::set<tables::address> destinations;
    std::unordered_map<tables::path_id, std::string> pid_owner;
    if (const auto pst = n["pst"]) {
        r.expect_list(pst, "paths.pst");
        if (pst.size() > limits.pst_capacity) {
            r.fail(pst, "paths.pst",
                   std::to_string(pst.size()) + " rows exceed tables.pst_capacity " +
                       std::to_string(limits.pst_capacity));
        }
        for (std::size_t i = 0; i < pst.size(); ++i) {
            const auto row = pst[i];
            const std::string key = "paths.pst[" + std::to_string(i) + "]";
            r.expect_map(row, key, {"dst", "pids", "fabric_ip"});
            tables::pst_row p;
            const auto dst = r.require(row, key, "dst");
            const auto text = r.string(dst, key + ".dst");
            const auto addr = tables::address::parse(text);
            if (!addr) {
                r.fail(dst, key + ".dst", "'" + text + "' is not an IPv4 or IPv6 address");
            }
            if (!destinations.insert(*addr).second) {
                r.fail(dst, key + ".dst", "destination " + text + " appears twice");
            }
            p.destination = *addr;
            if (const auto via = row["fabric_ip"]) {
                const auto via_text = r.string(via, key + ".fabric_ip");
                const auto fabric = tables::address::parse(via_text);
                if (!fabric || !fabric->is_ipv4()) {
                    r.fail(via, key + ".fabric_ip", "'" + via_text + "' is not an IPv4 address");
                }
                p.fabric_ipv4 = fabric->ipv4_host_order();
            } else if (!addr->is_ipv4()) {
                r.fail(dst, key + ".dst",
                       "an IPv6 destination needs fabric_ip: the IPv4 address of its host on the fabric");
            }
            const auto pids = r.require(row, key, "pids");
            r.expect_list(pids, key + ".pids");
            if (pids.size() == 0 || pids.size() > tables::max_paths_per_destination) {
                r.fail(pids, key + ".pids",
                       std::to_string(pids.size()) + " pids, expected 1 to " +
                           std::to_string(tables::max_paths_per_destination));
            }
            for (std::size_t j = 0; j < pids.size(); ++j) {
                const std::string pkey = key + ".pids[" + std::to_string(j) + "]";
                const auto pid = static_cast<tables::path_id>(r.integer(pids[j], pkey, 0, 65535));
                if (!pit_rows.contains(pid)) {
                    r.fail(pids[j], pkey, "pid " + std::to_string(pid) + " has no row in paths.pit (dangling pid)");
                }
                if (const auto it = pid_owner.find(pid); it != pid_owner.end()) {
                    r.fail(pids[j], pkey,
                           "pid " + std::to_string(pid) + " already serves " + it->second +
                               " (a path leads to one destination)");
                }
                pid_owner.emplace(pid, text);
                p.pids.push_back(pid);
            }
            out.pst.push_back(std::move(p));
        }
    }
}

} // namespace

void parse_laps_sections(const reader& r, const YAML::Node& doc, laps_config& out)
{
    if (const auto v = doc["version"]) {
        r.integer(v, "version", 1, 1);
    }
    if (const auto n = doc["host"]) {
        parse_host(r, n, out.host);
    }
    if (const auto n = doc["selection"]) {
        parse_selection(r, n, out.selection);
    }
    if (const auto n = doc["congestion"]) {
        parse_congestion(r, n, out.congestion);
    }
    if (const auto n = doc["retransmit"]) {
        parse_retransmit(r, n, out.retransmit);
    }
    if (const auto n = doc["tables"]) {
        parse_tables(r, n, out.tables);
    }
    if (const auto n = doc["baseval"]) {
        parse_baseval(r, n, out.baseval);
    }
    if (const auto n = doc["paths"]) {
        parse_paths(r, n, out.tables, out.paths);
    }
}

namespace {

laps_config load(const YAML::Node& doc, const std::string& name)
{
    const reader r(name);
    r.expect_map(doc, "", {"version", "host", "selection", "congestion", "retransmit", "tables", "baseval", "paths"});
    laps_config out;
    out.source = name;
    parse_laps_sections(r, doc, out);
    return out;
}

} // namespace

laps_config load_laps_config_file(const std::string& path)
{
    return load(load_yaml_file(path), path);
}

laps_config load_laps_config_string(const std::string& yaml, const std::string& name)
{
    return load(load_yaml_string(yaml, name), name);
}

softmax::selector_params selector_options(const laps_config& c)
{
    softmax::selector_params p;
    p.policy = c.selection.policy;
    p.beta = c.selection.beta;
    p.probing = c.selection.probing;
    p.seed = c.selection.seed;
    p.reps_cache_size = c.selection.reps_cache_size;
    p.reps_freeze_ns = c.selection.reps_freeze_ns;
    return p;
}

tables::path_table_options path_options(const laps_config& c)
{
    tables::path_table_options o;
    o.pit_capacity = c.tables.pit_capacity;
    o.estimate_clock_offset = c.tables.estimate_clock_offset;
    o.clock = c.tables.clock_offset;
    o.probe_backoff_cap_ns = c.selection.probe_backoff_cap_ns;
    o.reference_frame_bytes = c.baseval.packet_bytes;
    const double cap = c.congestion.aimd.cap_bps;
    o.link_ps_per_byte = cap > 0 ? static_cast<std::uint32_t>(std::lround(8e12 / cap)) : 0;
    return o;
}

void parse_hopper_section(const reader& r, const YAML::Node& n, const std::string& key, policy::hopper_config& out,
                          bool entropies)
{
    if (entropies) {
        r.expect_map(n, key,
                     {"probe_threshold", "congestion_threshold", "probe_ttl", "ewma_gain", "switch_margin", "entropies"});
    } else {
        r.expect_map(n, key, {"probe_threshold", "congestion_threshold", "probe_ttl", "ewma_gain", "switch_margin"});
    }
    r.optional_number(n, key, "probe_threshold", out.probe_threshold, 1.0, 1000.0);
    r.optional_number(n, key, "congestion_threshold", out.congestion_threshold, 1.0, 1000.0);
    r.optional_number(n, key, "probe_ttl", out.probe_ttl, 0.0, 1e6);
    r.optional_number(n, key, "ewma_gain", out.ewma_gain, 0.0, 1.0, true);
    r.optional_number(n, key, "switch_margin", out.switch_margin, 0.0, 1.0, true);
    if (entropies) {
        r.optional_integer(n, key, "entropies", out.entropies, 2, 0x4000);
    }
    if (out.congestion_threshold < out.probe_threshold) {
        r.fail(n, key, "congestion_threshold must be at least probe_threshold (Hopper probes before it switches)");
    }
}

void parse_flowbender_section(const reader& r, const YAML::Node& n, const std::string& key,
                              policy::flowbender_config& out, bool entropies)
{
    if (entropies) {
        r.expect_map(n, key, {"marked_fraction", "rounds", "entropies"});
    } else {
        r.expect_map(n, key, {"marked_fraction", "rounds"});
    }
    r.optional_number(n, key, "marked_fraction", out.marked_fraction, 0.0, 1.0);
    r.optional_integer(n, key, "rounds", out.rounds, 1, 1 << 20);
    if (entropies) {
        r.optional_integer(n, key, "entropies", out.entropies, 2, 0x4000);
    }
}

} // namespace laps::config
