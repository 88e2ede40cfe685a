#pragma once
// Path-selection policies, chosen by name (config `selection.policy`, console
// `set policy <name>`), so users can compare LAPS with the simpler schemes on
// the same traffic and the same fabric. The registry is also the policies'
// name table (common/names.hpp): config, console and command lines read it.

#include "common/names.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace laps::softmax {

enum class policy : std::uint8_t {
    laps,    // Eq. 1 softmax of measured latency, Alg. 1 probing (the paper)
    spray,   // random packet spraying over the valid paths, latency ignored (RPS)
    ecmp,    // one path per flow by hash, latency ignored (static ECMP)
    fastest, // always the lowest measured latency (Eq. 1 with beta -> infinity), with probing
    // The other seeds' host-side policies (policy/, docs/pipeline.md "Other policies"):
    reps,       // REPS: per-packet paths recycled from unmarked ACKs, frozen after timeouts
    hopper,     // Hopper: one path per flow, moved by latency probing (1.5x / 2.5x base)
    flowbender, // FlowBender: one path per flow, moved at random after ECN-marked rounds
    selective,  // selective spraying: Eq. 1 for elephants, one hashed path for the rest
};

struct policy_info {
    std::string_view name;
    policy value;
    std::string_view help;
};

inline constexpr std::array policy_registry{
    policy_info{"laps", policy::laps, "softmax of measured one-way latency (Eq. 1), stale paths probed (Alg. 1)"},
    policy_info{"spray", policy::spray, "uniform random spraying over valid paths (RPS); no probing"},
    policy_info{"ecmp", policy::ecmp, "one valid path per flow by hash, latency ignored; no probing"},
    policy_info{"fastest", policy::fastest, "the path of lowest measured latency (argmax), stale paths probed"},
    policy_info{"reps", policy::reps, "REPS: paths of unmarked ACKs recycled per packet, ECN-marked ones dropped"},
    policy_info{"hopper", policy::hopper, "Hopper: one path per flow, probed and moved above 1.5x / 2.5x its base"},
    policy_info{"flowbender", policy::flowbender, "FlowBender: one path per flow, a random other after ECN rounds"},
    policy_info{"selective", policy::selective, "selective spraying: Eq. 1 for elephants, one hashed path for mice"},
};

// Whether a policy reads the ECN echo of ACKs (a fabric should mark CE for it).
constexpr bool uses_ecn(policy p) noexcept
{
    return p == policy::reps || p == policy::flowbender;
}

// Whether it keeps each flow on one path that only it moves (the engine's pinned slot).
constexpr bool pins_flows(policy p) noexcept
{
    return p == policy::hopper || p == policy::flowbender;
}

constexpr std::optional<policy> find_policy(std::string_view name) noexcept
{
    return common::find_named(policy_registry, name);
}

constexpr std::string_view to_string(policy p) noexcept
{
    return common::name_of(policy_registry, p);
}

} // namespace laps::softmax
