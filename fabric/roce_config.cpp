#include "fabric/roce_config.hpp"
#include "policy/reps.hpp"

#include <cmath>
#include <string>

namespace laps::fabric {

namespace {

using config::reader;

void optional_us(const reader& r, const YAML::Node& n, const std::string& parent, const char* name, time_ns& out,
                 bool positive = true)
{
    if (const auto v = n[name]) {
        const std::string key = parent + "." + name;
        out = static_cast<time_ns>(std::llround(r.number(v, key, 0.0, 1e9) * 1000.0));
        if (positive && out == 0) {
            r.fail(v, key, "must be positive");
        }
    }
}

void optional_mbps(const reader& r, const YAML::Node& n, const std::string& parent, const char* name, double& out)
{
    if (const auto v = n[name]) {
        out = r.number(v, parent + "." + name, 0.0, 1e7, true) * 1e6;
    }
}

void parse_dcqcn(const reader& r, const YAML::Node& n, dcqcn_params& p)
{
    const std::string k = "roce.dcqcn";
    r.expect_map(n, k,
                 {"np_interval_us", "cnp_on_nack", "alpha_interval_us", "g", "decrease_interval_us", "rp_timer_us",
                  "fast_recovery_stages", "rate_ai_mbps", "rate_hai_mbps", "min_rate_mbps", "rate_on_first_cnp",
                  "clamp_target", "byte_counter_bytes"});
    optional_us(r, n, k, "np_interval_us", p.np_interval_ns, false);
    r.optional_boolean(n, k, "cnp_on_nack", p.cnp_on_nack);
    optional_us(r, n, k, "alpha_interval_us", p.alpha_interval_ns);
    r.optional_number(n, k, "g", p.g, 0.0, 1.0, true);
    optional_us(r, n, k, "decrease_interval_us", p.decrease_interval_ns);
    optional_us(r, n, k, "rp_timer_us", p.rp_timer_ns);
    r.optional_integer(n, k, "fast_recovery_stages", p.fast_recovery_stages, 0, 1000);
    optional_mbps(r, n, k, "rate_ai_mbps", p.rate_ai_bps);
    optional_mbps(r, n, k, "rate_hai_mbps", p.rate_hai_bps);
    optional_mbps(r, n, k, "min_rate_mbps", p.min_rate_bps);
    r.optional_number(n, k, "rate_on_first_cnp", p.rate_on_first_cnp, 0.0, 1.0, true);
    r.optional_boolean(n, k, "clamp_target", p.clamp_target);
    r.optional_integer(n, k, "byte_counter_bytes", p.byte_counter_bytes, 0, std::int64_t{1} << 40);
}

void parse_dctcp(const reader& r, const YAML::Node& n, dctcp_params& p)
{
    const std::string k = "roce.dctcp";
    r.expect_map(n, k, {"g", "rate_ai_mbps", "min_rate_mbps"});
    r.optional_number(n, k, "g", p.g, 0.0, 1.0, true);
    optional_mbps(r, n, k, "rate_ai_mbps", p.rate_ai_bps);
    optional_mbps(r, n, k, "min_rate_mbps", p.min_rate_bps);
}

void parse_conga(const reader& r, const YAML::Node& n, conga_params& p)
{
    const std::string k = "roce.conga";
    r.expect_map(n, k, {"dre_period_us", "dre_alpha", "quantize_bits", "aging_us"});
    optional_us(r, n, k, "dre_period_us", p.dre_period_ns);
    r.optional_number(n, k, "dre_alpha", p.dre_alpha, 0.0, 1.0, true);
    r.optional_integer(n, k, "quantize_bits", p.quantize_bits, 1, 8);
    optional_us(r, n, k, "aging_us", p.aging_ns);
}

void parse_plb(const reader& r, const YAML::Node& n, plb_params& p)
{
    const std::string k = "roce.plb";
    r.expect_map(n, k, {"forced_rounds", "idle_rounds", "congested_fraction"});
    r.optional_integer(n, k, "forced_rounds", p.forced_rounds, 1, 1 << 20);
    r.optional_integer(n, k, "idle_rounds", p.idle_rounds, 1, 1 << 20);
    r.optional_number(n, k, "congested_fraction", p.congested_fraction, 0.0, 1.0, true);
}

void parse_conweave(const reader& r, const YAML::Node& n, conweave_params& p)
{
    const std::string k = "roce.conweave";
    r.expect_map(n, k,
                 {"extra_reply_deadline_us", "path_pause_us", "extra_voq_flush_us", "default_voq_wait_us",
                  "tx_expiry_us"});
    optional_us(r, n, k, "extra_reply_deadline_us", p.extra_reply_deadline_ns, false);
    optional_us(r, n, k, "path_pause_us", p.path_pause_ns, false);
    optional_us(r, n, k, "extra_voq_flush_us", p.extra_voq_flush_ns, false);
    optional_us(r, n, k, "default_voq_wait_us", p.default_voq_wait_ns);
    optional_us(r, n, k, "tx_expiry_us", p.tx_expiry_ns);
}

void parse_reps(const reader& r, const YAML::Node& n, reps_params& p)
{
    const std::string k = "roce.reps";
    r.expect_map(n, k, {"entropies", "cache_size", "freeze_us"});
    r.optional_integer(n, k, "entropies", p.entropies, 1, 0x4000);
    r.optional_integer(n, k, "cache_size", p.cache_size, 1, policy::reps::max_cache);
    optional_us(r, n, k, "freeze_us", p.freeze_ns, false);
}

void parse_hopper(const reader& r, const YAML::Node& n, hopper_params& p)
{
    const std::string k = "roce.hopper";
    r.expect_map(n, k,
                 {"probe_threshold", "congestion_threshold", "probe_ttl", "ewma_gain", "switch_margin", "entropies"});
    r.optional_number(n, k, "probe_threshold", p.probe_threshold, 1.0, 1000.0);
    r.optional_number(n, k, "congestion_threshold", p.congestion_threshold, 1.0, 1000.0);
    r.optional_number(n, k, "probe_ttl", p.probe_ttl, 0.0, 1e6);
    r.optional_number(n, k, "ewma_gain", p.ewma_gain, 0.0, 1.0, true);
    r.optional_number(n, k, "switch_margin", p.switch_margin, 0.0, 1.0, true);
    r.optional_integer(n, k, "entropies", p.entropies, 2, 0x4000);
    if (p.congestion_threshold < p.probe_threshold) {
        r.fail(n, k, "congestion_threshold must be at least probe_threshold (Hopper probes before it switches)");
    }
}

void parse_flowbender(const reader& r, const YAML::Node& n, flowbender_params& p)
{
    const std::string k = "roce.flowbender";
    r.expect_map(n, k, {"marked_fraction", "rounds", "entropies"});
    r.optional_number(n, k, "marked_fraction", p.marked_fraction, 0.0, 1.0);
    r.optional_integer(n, k, "rounds", p.rounds, 1, 1 << 20);
    r.optional_integer(n, k, "entropies", p.entropies, 2, 0x4000);
}

void parse_selective(const reader& r, const YAML::Node& n, selective_params& p)
{
    const std::string k = "roce.selective";
    r.expect_map(n, k, {"elephant_bytes", "classify", "items"});
    if (const auto v = n["items"]) {
        r.expect_list(v, k + ".items");
        p.items.clear();
        for (std::size_t i = 0; i < v.size(); ++i) {
            p.items.push_back(
                static_cast<std::uint32_t>(r.integer(v[i], k + ".items[" + std::to_string(i) + "]", 0, 1 << 20)));
        }
    }
    r.optional_integer(n, k, "elephant_bytes", p.elephant_bytes, 0, std::int64_t{1} << 50);
    if (const auto v = n["classify"]) {
        p.by_sent_bytes = r.choice(v, k + ".classify", {"posted", "sent"}) == "sent";
    }
}

void parse_dlb(const reader& r, const YAML::Node& n, dlb_params& p)
{
    const std::string k = "roce.dlb";
    r.expect_map(n, k, {"queue_full_bytes", "heartbeat_us"});
    r.optional_integer(n, k, "queue_full_bytes", p.queue_full_bytes, 1, std::int64_t{1} << 40);
    optional_us(r, n, k, "heartbeat_us", p.heartbeat_ns);
}

void parse_telb(const reader& r, const YAML::Node& n, std::vector<telb_rule>& out)
{
    const std::string k = "roce.telb";
    r.expect_list(n, k);
    out.clear();
    for (std::size_t i = 0; i < n.size(); ++i) {
        const auto item = n[i];
        const std::string key = k + "[" + std::to_string(i) + "]";
        r.expect_map(item, key, {"item", "path"});
        telb_rule rule;
        rule.item = static_cast<std::uint32_t>(r.integer(r.require(item, key, "item"), key + ".item", 0, 1 << 20));
        rule.path = static_cast<std::uint16_t>(r.integer(r.require(item, key, "path"), key + ".path", 0, 0xfffe));
        out.push_back(rule);
    }
}

void parse_reunion(const reader& r, const YAML::Node& n, reunion_params& p)
{
    const std::string k = "roce.reunion";
    r.expect_map(n, k, {"interval_us", "tolerance", "elephant_bytes", "cms_depth", "cms_width"});
    optional_us(r, n, k, "interval_us", p.interval_ns);
    r.optional_integer(n, k, "tolerance", p.tolerance, 1, 1 << 16);
    r.optional_integer(n, k, "elephant_bytes", p.elephant_bytes, 1, std::int64_t{1} << 50);
    r.optional_integer(n, k, "cms_depth", p.cms_depth, 1, 64);
    r.optional_integer(n, k, "cms_width", p.cms_width, 1, 1 << 24);
}

} // namespace

void parse_roce_section(const reader& r, const YAML::Node& n, roce_params& out)
{
    r.expect_map(n, "roce",
                 {"recovery", "window", "reorder_tolerance_packets", "rto_us", "irn_rto_low_us", "irn_rto_high_us", "irn_bdp_bytes",
                  "nack_interval_us", "nic_queue_packets", "flowlet_timeout_us", "dcqcn", "dctcp", "conga", "plb",
                  "conweave", "reps", "hopper", "flowbender", "selective", "dlb", "telb", "reunion"});
    if (const auto v = n["recovery"]) {
        const auto m = r.choice(v, "roce.recovery", {"auto", "gbn", "irn"});
        out.recovery = m == "irn" ? loss_recovery::irn : m == "gbn" ? loss_recovery::go_back_n : loss_recovery::automatic;
    }
    if (const auto v = n["window"]) {
        const auto w = r.choice(v, "roce.window", {"auto", "none", "bdp"});
        out.window = w == "none" ? window_mode::none : w == "bdp" ? window_mode::bdp : window_mode::automatic;
    }
    if (const auto v = n["reorder_tolerance_packets"]) {
        out.reorder_tolerance_packets =
            v.Scalar() == "auto" ? -1 : static_cast<std::int32_t>(r.integer(v, "roce.reorder_tolerance_packets", 0, 1 << 20));
    }
    optional_us(r, n, "roce", "rto_us", out.rto_ns);
    optional_us(r, n, "roce", "irn_rto_low_us", out.irn_rto_low_ns);
    optional_us(r, n, "roce", "irn_rto_high_us", out.irn_rto_high_ns);
    r.optional_integer(n, "roce", "irn_bdp_bytes", out.irn_bdp_bytes, 1, std::int64_t{1} << 40);
    optional_us(r, n, "roce", "nack_interval_us", out.nack_interval_ns, false);
    r.optional_integer(n, "roce", "nic_queue_packets", out.nic_queue_packets, 1, 1 << 16);
    optional_us(r, n, "roce", "flowlet_timeout_us", out.flowlet_timeout_ns);
    if (const auto v = n["dcqcn"]) {
        parse_dcqcn(r, v, out.dcqcn);
    }
    if (const auto v = n["dctcp"]) {
        parse_dctcp(r, v, out.dctcp);
    }
    if (const auto v = n["conga"]) {
        parse_conga(r, v, out.conga);
    }
    if (const auto v = n["plb"]) {
        parse_plb(r, v, out.plb);
    }
    if (const auto v = n["conweave"]) {
        parse_conweave(r, v, out.conweave);
    }
    if (const auto v = n["reps"]) {
        parse_reps(r, v, out.reps);
    }
    if (const auto v = n["hopper"]) {
        parse_hopper(r, v, out.hopper);
    }
    if (const auto v = n["flowbender"]) {
        parse_flowbender(r, v, out.flowbender);
    }
    if (const auto v = n["selective"]) {
        parse_selective(r, v, out.selective);
    }
    if (const auto v = n["dlb"]) {
        parse_dlb(r, v, out.dlb);
    }
    if (const auto v = n["telb"]) {
        parse_telb(r, v, out.telb);
    }
    if (const auto v = n["reunion"]) {
        parse_reunion(r, v, out.reunion);
    }
}

} // namespace laps::fabric
