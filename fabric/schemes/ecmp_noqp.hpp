#pragma once
// ecmp_noqp: ECMP without QP entropy: every QP sends from the RoCEv2 port
// (4791), so the QPs of one host pair hash onto the same path (the
// polarisation seed 004 warns of).

#include "fabric/schemes/scheme.hpp"

#include <memory>

namespace laps::fabric::schemes {

std::unique_ptr<scheme> make_ecmp_noqp(simulation& sim);

} // namespace laps::fabric::schemes
