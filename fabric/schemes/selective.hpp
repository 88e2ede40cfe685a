#pragma once
// selective: selective packet spraying (seed 004; policy/selective.hpp) at
// the sending host: the flows of traffic items marked to spray, and
// elephants (by posted size, or by bytes sent so far), send every packet
// with a random entropy; the others keep their QP's. Parameters
// `roce.selective`: elephant_bytes, classify (posted | sent), items.

#include "fabric/schemes/scheme.hpp"
#include "policy/selective.hpp"

#include <any>
#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace laps::fabric::schemes {

struct selective_params {
    policy::selective_config rule;    // 1 MB, by posted size
    std::vector<std::uint32_t> items; // traffic items (jobs, their QP ranges) marked to spray
};

inline constexpr std::array<std::string_view, 1> selective_counters{
    "sprayed_flows", // flows classified as elephants (sprayed)
};

std::unique_ptr<scheme> make_selective(simulation& sim);
std::any parse_selective_params(const config::reader& r, const YAML::Node& n);

} // namespace laps::fabric::schemes
