#pragma once
// conga: CONGA (Alizadeh et al., SIGCOMM 2014; paper §IV) at the ToRs: each
// new flowlet takes the candidate minimising max(its first link's load, the
// path's congestion as the destination ToR last fed it back). DATA records
// the largest load (DRE level) of the links it crosses; the destination ToR
// keeps the latest per path and piggybacks one entry per ACK back to the
// source ToR (round robin, changed entries first); feedback older than the
// aging time counts as 0. Parameters `roce.conga` (also DLB's and GLB's
// load estimators).

#include "fabric/schemes/dre.hpp"
#include "fabric/schemes/scheme.hpp"

#include <any>
#include <array>
#include <memory>
#include <string_view>

namespace laps::fabric::schemes {

struct conga_params {
    dre_params dre;
    common::time_ns aging_ns = 500 * common::ns_per_us; // conga_agingTime: older feedback counts as 0
};

inline constexpr std::array<std::string_view, 2> conga_counters{
    "flowlets",       // new flowlets
    "conga_feedback", // congestion-to-leaf updates carried back
};

std::unique_ptr<scheme> make_conga(simulation& sim);
std::any parse_conga_params(const config::reader& r, const YAML::Node& n);

} // namespace laps::fabric::schemes
