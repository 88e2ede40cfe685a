#pragma once
// Path-selection policies, chosen by name (config `selection.policy`, console
// `set policy <name>`), so users can compare LAPS with the simpler schemes on
// the same traffic and the same fabric.

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
};

struct policy_info {
    std::string_view name;
    policy id;
    std::string_view help;
};

inline constexpr std::array policy_registry{
    policy_info{"laps", policy::laps, "softmax of measured one-way latency (Eq. 1), stale paths probed (Alg. 1)"},
    policy_info{"spray", policy::spray, "uniform random spraying over valid paths (RPS); no probing"},
    policy_info{"ecmp", policy::ecmp, "one valid path per flow by hash, latency ignored; no probing"},
    policy_info{"fastest", policy::fastest, "the path of lowest measured latency (argmax), stale paths probed"},
};

constexpr std::optional<policy> find_policy(std::string_view name) noexcept
{
    for (const auto& p : policy_registry) {
        if (p.name == name) {
            return p.id;
        }
    }
    return std::nullopt;
}

constexpr std::string_view to_string(policy p) noexcept
{
    for (const auto& info : policy_registry) {
        if (info.id == p) {
            return info.name;
        }
    }
    return "unknown";
}

} // namespace laps::softmax
