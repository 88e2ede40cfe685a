#pragma once
// hopper: Hopper (seed 002, §3; policy/hopper.hpp) at the sending host: a
// flow keeps one entropy and times its ACKs; above 1.5 x the base RTT it
// probes two random other entropies, above 2.5 x it moves to a clearly
// faster probed one, the first packet there waiting the RTT difference. The
// base RTT is the fastest candidate's, there and back. The NIC runs IRN
// with Hopper's reorder tolerance (seed 002 §4.1). Parameters `roce.hopper`.

#include "fabric/schemes/scheme.hpp"
#include "policy/hopper.hpp"

#include <any>
#include <array>
#include <memory>
#include <string_view>

namespace laps::fabric::schemes {

inline constexpr std::array<std::string_view, 2> hopper_counters{
    "hopper_probes",   // probes sent
    "hopper_switches", // moves to a probed path
};

std::unique_ptr<scheme> make_hopper(simulation& sim);
// Into a policy::hopper_config (its base is set per flow).
std::any parse_hopper_params(const config::reader& r, const YAML::Node& n);

} // namespace laps::fabric::schemes
