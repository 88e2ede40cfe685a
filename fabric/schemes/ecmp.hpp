#pragma once
// ecmp: static ECMP with RoCEv2's QP entropy (seed 004, "hashing with
// RoCEv2 BTH/QP entropy"): every QP's UDP source port carries a hash of its
// QPN, and the source ToR hashes the 5-tuple onto one candidate path, the
// same for every packet of the flow (the base scheme's path choice).

#include "fabric/schemes/scheme.hpp"

#include <memory>

namespace laps::fabric::schemes {

std::unique_ptr<scheme> make_ecmp(simulation& sim);

} // namespace laps::fabric::schemes
