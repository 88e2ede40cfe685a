#pragma once
// glb: GLB (seed 004, "GLB heartbeats"): DLB's choice (link_quality.hpp)
// with the quality of the path's remote links too, as their switches last
// advertised it: every switch advertises the quality of each of its links
// once per heartbeat (roce.dlb.heartbeat_us).

#include "fabric/schemes/scheme.hpp"

#include <array>
#include <memory>
#include <string_view>

namespace laps::fabric::schemes {

inline constexpr std::array<std::string_view, 2> glb_counters{
    "flowlets",       // new flowlets
    "glb_heartbeats", // link-quality advertisements taken
};

std::unique_ptr<scheme> make_glb(simulation& sim);

} // namespace laps::fabric::schemes
