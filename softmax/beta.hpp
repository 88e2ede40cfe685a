#pragma once
// beta of Eq. 1, P(i) = exp(-beta d_i) / sum_j exp(-beta d_j), with d in ns.
//
// fixed      : one beta for every destination, given per microsecond in configs
//              (beta_per_ns = per_us / 1000). 0 is uniform spraying (RPS).
// normalized : beta = alpha / max baseVal of the destination's paths, what the
//              authors' simulator does (alpha = 1): shares then depend on the
//              ratio of path delays, not on the fabric's absolute scale.

#include "common/names.hpp"
#include "common/time.hpp"

#include <array>
#include <cstdint>

namespace laps::softmax {

enum class beta_mode : std::uint8_t { fixed, normalized };

// `selection.beta.mode` in configs, and in what the console and telemetry show.
inline constexpr std::array beta_mode_names{
    common::named<beta_mode>{"fixed", beta_mode::fixed},
    common::named<beta_mode>{"normalized", beta_mode::normalized},
};

struct beta_params {
    beta_mode mode = beta_mode::normalized;
    double fixed_per_ns = 0.0; // mode fixed
    double alpha = 1.0;        // mode normalized

    static beta_params fixed_per_us(double per_us) noexcept
    {
        return {beta_mode::fixed, per_us / 1000.0, 1.0};
    }
    static beta_params normalized_alpha(double alpha) noexcept { return {beta_mode::normalized, 0.0, alpha}; }

    // beta in 1/ns for a destination whose longest path has baseVal `max_base_ns`.
    double for_destination(common::time_ns max_base_ns) const noexcept
    {
        if (mode == beta_mode::fixed) {
            return fixed_per_ns;
        }
        return max_base_ns > 0 ? alpha / static_cast<double>(max_base_ns) : 0.0;
    }
};

} // namespace laps::softmax
