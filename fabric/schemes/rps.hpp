#pragma once
// rps: oblivious packet spraying (RPS; seed 004, "per-packet load
// balancing"): every DATA packet leaves with a random entropy in its UDP
// source port, so the switches' ECMP spreads a flow over all paths. The NIC
// runs IRN: the packets arrive out of order.

#include "fabric/schemes/scheme.hpp"

#include <memory>

namespace laps::fabric::schemes {

std::unique_ptr<scheme> make_rps(simulation& sim);

} // namespace laps::fabric::schemes
