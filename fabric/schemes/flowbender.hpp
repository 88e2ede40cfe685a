#pragma once
// flowbender: FlowBender (Kabbani et al., CoNEXT 2014; Hopper's baseline,
// seed 002; policy/flowbender.hpp) at the sending host: a flow keeps one
// entropy, and moves to a random other after a round trip with more than 5%
// of its ACKs ECN-echoed, or at once on a timeout. Parameters `roce.flowbender`.

#include "fabric/schemes/scheme.hpp"

#include <any>
#include <array>
#include <memory>
#include <string_view>

namespace laps::fabric::schemes {

inline constexpr std::array<std::string_view, 1> flowbender_counters{"flowbender_reroutes"};

std::unique_ptr<scheme> make_flowbender(simulation& sim);
// Into a policy::flowbender_config.
std::any parse_flowbender_params(const config::reader& r, const YAML::Node& n);

} // namespace laps::fabric::schemes
