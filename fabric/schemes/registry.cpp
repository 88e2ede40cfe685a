// The registry's rows (registry.hpp). Their order is that of help text, of
// `--list-schemes` and of the counters in the reports.
#include "fabric/schemes/registry.hpp"

#include "common/names.hpp"
#include "fabric/schemes/conga.hpp"
#include "fabric/schemes/conweave.hpp"
#include "fabric/schemes/dlb.hpp"
#include "fabric/schemes/ecmp.hpp"
#include "fabric/schemes/ecmp_noqp.hpp"
#include "fabric/schemes/flowbender.hpp"
#include "fabric/schemes/glb.hpp"
#include "fabric/schemes/hopper.hpp"
#include "fabric/schemes/laps.hpp"
#include "fabric/schemes/letflow.hpp"
#include "fabric/schemes/link_quality.hpp"
#include "fabric/schemes/parameters.hpp"
#include "fabric/schemes/scheme.hpp"
#include "fabric/schemes/plb.hpp"
#include "fabric/schemes/reps.hpp"
#include "fabric/schemes/reunion.hpp"
#include "fabric/schemes/rps.hpp"
#include "fabric/schemes/selective.hpp"
#include "fabric/schemes/telb.hpp"

#include <algorithm>
#include <array>

namespace laps::fabric::schemes {

namespace {

using enum transport;

constexpr std::array rows{
    info{"laps", laps_engine, false,
         "the LAPS engine: latency-aware spraying (Eq. 1), AIMD (Alg. 2), selective resend (Alg. 3)", make_laps},
    info{"ecmp", roce_dcqcn, false,
         "RoCEv2 + DCQCN; one candidate path per flow by 5-tuple hash (QP entropy in the UDP source port)", make_ecmp},
    info{"letflow", roce_dcqcn, false,
         "RoCEv2 + DCQCN; a random candidate path per flowlet (idle gap > flowlet timeout, 50 us)", make_letflow,
         flowlet_counters},
    info{"plb", roce_dctcp, false,
         "RoCEv2 + DCTCP; a random new path after N consecutive congested rounds (12 forced, 3 when idle)", make_plb,
         plb_counters, "plb", parse_plb_params},
    info{"conga", roce_dcqcn, false,
         "RoCEv2 + DCQCN; per flowlet the least congested path by leaf-to-leaf DRE feedback", make_conga,
         conga_counters, "conga", parse_conga_params},
    info{"conweave", roce_dcqcn, false,
         "RoCEv2 + DCQCN; source-ToR rerouting on slow RTT replies, destination-ToR reordering", make_conweave,
         conweave_counters, "conweave", parse_conweave_params},
    info{"ecmp_noqp", roce_dcqcn, false,
         "RoCEv2 + DCQCN; ECMP without QP entropy (fixed UDP source port): a host pair's QPs share a path",
         make_ecmp_noqp},
    info{"rps", roce_dcqcn, true,
         "RoCEv2 + DCQCN + IRN; oblivious packet spraying: a random UDP source port per packet", make_rps},
    info{"reps", roce_dcqcn, true,
         "RoCEv2 + DCQCN + IRN; REPS: per-packet entropies recycled from unmarked ACKs, frozen on timeouts",
         make_reps, reps_counters, "reps", parse_reps_params},
    info{"hopper", roce_dcqcn, true,
         "RoCEv2 + DCQCN + IRN; Hopper: RTT-probed power-of-two repathing above 1.5x / 2.5x base RTT", make_hopper,
         hopper_counters, "hopper", parse_hopper_params},
    info{"flowbender", roce_dcqcn, false,
         "RoCEv2 + DCQCN; FlowBender: a random new path after a round with > 5% of ACKs ECN-marked",
         make_flowbender, flowbender_counters, "flowbender", parse_flowbender_params},
    info{"selective", roce_dcqcn, true,
         "RoCEv2 + DCQCN + IRN; selective spraying: per-packet spraying for elephants, one path for the rest",
         make_selective, selective_counters, "selective", parse_selective_params},
    info{"dlb", roce_dcqcn, false,
         "RoCEv2 + DCQCN; DLB: per flowlet the best local uplink by quantised load and queue depth", make_dlb,
         flowlet_counters, "dlb", parse_dlb_params},
    info{"telb", roce_dcqcn, false,
         "RoCEv2 + DCQCN; TELB: each flow pinned to a path by a policy table (traffic item -> path)", make_telb,
         telb_counters, "telb", parse_telb_params},
    info{"glb", roce_dcqcn, false,
         "RoCEv2 + DCQCN; GLB: per flowlet the best path by local and heartbeat-advertised remote link quality",
         make_glb, glb_counters},
    info{"reunion", roce_dcqcn, false,
         "RoCEv2 + DCQCN; Reunion: CMS elephants, destination-switch collision notices, source-switch reroutes",
         make_reunion, reunion_counters, "reunion", parse_reunion_params},
};

} // namespace

std::span<const info> registry() noexcept
{
    return rows;
}

const info* find(std::string_view name) noexcept
{
    for (const auto& row : rows) {
        if (row.name == name) {
            return &row;
        }
    }
    return nullptr;
}

const info& default_scheme() noexcept
{
    return rows.front();
}

std::string names()
{
    return common::joined_names(rows);
}

std::vector<std::string_view> parameter_keys()
{
    std::vector<std::string_view> keys;
    for (const auto& row : rows) {
        if (!row.params_key.empty()) {
            keys.push_back(row.params_key);
        }
    }
    return keys;
}

void parse_parameters(const config::reader& r, const YAML::Node& roce, parameters& out)
{
    for (const auto& row : rows) {
        if (row.params_key.empty()) {
            continue;
        }
        if (const auto n = roce[std::string(row.params_key)]) {
            out.set(row.params_key, row.parse_params(r, n));
        }
    }
}

void parameters::set(std::string_view key, std::any value)
{
    for (auto& [k, v] : _sections) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    _sections.emplace_back(key, std::move(value));
}

std::vector<std::pair<std::string_view, std::uint64_t>> counter_report(const info& row, const scheme& s)
{
    // Every scheme's columns, the same for every run: path changes, then each
    // row's counters in registry order (a shared name once, where it first appears).
    std::vector<std::pair<std::string_view, std::uint64_t>> out{{"path_changes", s.path_changes()}};
    for (const auto& r : rows) {
        for (const auto name : r.counters) {
            if (std::none_of(out.begin(), out.end(), [&](const auto& c) { return c.first == name; })) {
                out.emplace_back(name, 0);
            }
        }
    }
    const auto values = s.counts();
    for (std::size_t i = 0; i < row.counters.size() && i < values.size(); ++i) {
        for (auto& c : out) {
            if (c.first == row.counters[i]) {
                c.second = values[i];
            }
        }
    }
    return out;
}

} // namespace laps::fabric::schemes
