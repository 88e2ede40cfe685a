#include "fabric/hosts/roce_config.hpp"

#include "fabric/schemes/registry.hpp"
#include "fabric/units.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace laps::fabric::hosts {

namespace {

using config::reader;

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

} // namespace

void parse_roce_section(const reader& r, const YAML::Node& n, roce_params& out, schemes::parameters& schemes)
{
    std::vector<std::string_view> keys{"recovery",          "window",         "reorder_tolerance_packets",
                                       "rto_us",            "irn_rto_low_us", "irn_rto_high_us",
                                       "irn_bdp_bytes",     "nack_interval_us", "nic_queue_packets",
                                       "flowlet_timeout_us", "dcqcn",         "dctcp"};
    const auto sections = schemes::parameter_keys();
    keys.insert(keys.end(), sections.begin(), sections.end());
    r.expect_map(n, "roce", keys);
    if (const auto v = n["recovery"]) {
        out.recovery = r.choice_of(v, "roce.recovery", loss_recovery_names);
    }
    if (const auto v = n["window"]) {
        out.window = r.choice_of(v, "roce.window", window_mode_names);
    }
    if (const auto v = n["reorder_tolerance_packets"]) {
        out.reorder_tolerance_packets =
            v.Scalar() == "auto" ? -1
                                 : static_cast<std::int32_t>(r.integer(v, "roce.reorder_tolerance_packets", 0, 1 << 20));
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
    schemes::parse_parameters(r, n, schemes);
}

} // namespace laps::fabric::hosts
