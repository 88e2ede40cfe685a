#pragma once
// dlb: DLB (seed 004): per flowlet the candidate whose first link, the
// source ToR's uplink, has the best quality (link_quality.hpp).

#include "fabric/schemes/scheme.hpp"

#include <memory>

namespace laps::fabric::schemes {

std::unique_ptr<scheme> make_dlb(simulation& sim);

} // namespace laps::fabric::schemes
