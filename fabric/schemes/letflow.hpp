#pragma once
// letflow: LetFlow (Vanini et al., NSDI 2017; paper §IV) at the source ToR:
// each new flowlet takes a random candidate path.

#include "fabric/schemes/scheme.hpp"

#include <array>
#include <memory>
#include <string_view>

namespace laps::fabric::schemes {

inline constexpr std::array<std::string_view, 1> flowlet_counters{"flowlets"}; // new flowlets

std::unique_ptr<scheme> make_letflow(simulation& sim);

} // namespace laps::fabric::schemes
