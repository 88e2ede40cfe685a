#pragma once
// reunion: Reunion (seed 000, §3): switch-side rerouting of elephant flows
// that collide on a link, decided in intervals of s (§4.1: 1000 us).
//   source switch  classifies flows with a Count-Min Sketch (§3.2) and marks
//                  elephants' packets; keeps each flow on its path (ECMP at
//                  first) until told to move it;
//   every hop      but the destination switch writes the first link where
//                  more than t elephants met in this interval into the
//                  packet's bottleneck field (§3.3);
//   destination    records elephants' paths and bottleneck links; at the end
//   switch         of each interval sends one notification per bottleneck
//                  link, naming the last flow marked there and the links
//                  carrying more than t elephants (Algorithm 1);
//   source switch  at the end of the interval moves each notified flow to the
//                  first path whose links all carry fewer than t of its
//                  elephants, notified links counting as full (Algorithm 2).
// Links into a host are left out of the tables: every path of a flow ends
// on its receiver's link, and elephants meeting there are an in-cast, which
// no path choice resolves. Parameters `roce.reunion`.

#include "fabric/schemes/scheme.hpp"

#include <any>
#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

namespace laps::fabric::schemes {

// §3, §4.1: s = 1000 us, t = 1; a CMS of 7 rows x 2000.
struct reunion_params {
    time_ns interval_ns = 1000 * common::ns_per_us;
    std::uint32_t tolerance = 1;
    std::uint64_t elephant_bytes = 1'000'000;
    std::uint32_t cms_depth = 7;
    std::uint32_t cms_width = 2000;
};

inline constexpr std::array<std::string_view, 4> reunion_counters{
    "reunion_elephants", // flows the CMS classified as elephants
    "reunion_marks",     // elephant DATA marked with a bottleneck link
    "reunion_notifies",  // notifications sent by destination switches
    "reunion_reroutes",  // elephants moved by their source switch
};

std::unique_ptr<scheme> make_reunion(simulation& sim);
std::any parse_reunion_params(const config::reader& r, const YAML::Node& n);

} // namespace laps::fabric::schemes
