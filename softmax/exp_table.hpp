#pragma once
// exp(-x) for x >= 0 by table and linear interpolation.
//
// Weights are recomputed whenever a path's latency changes, i.e. after almost
// every ACK, so the recompute must be cheap too: a table lookup is ~5x
// cheaper than std::exp. The FPGA prototype makes the same trade with
// fixed-point look-up tables (paper §III-H). With 64 steps per unit the
// relative error is below 4e-5; beyond x = 40 the weight (4e-18 of the best
// path's) is 0.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace laps::softmax {

class exp_table {
public:
    static constexpr double x_limit = 40.0;
    static constexpr int steps_per_unit = 64;
    static constexpr std::size_t size = static_cast<std::size_t>(x_limit) * steps_per_unit + 2;
    // Fixed-point weights: exp(-x) * 2^24, so the best path weighs 2^24 and
    // 16 paths sum below 2^32.
    static constexpr double weight_one = 16777216.0;
    // x in 16.16 fixed point of table steps: x * steps_per_unit * 2^16.
    static constexpr double fixed_per_unit = steps_per_unit * 65536.0;

    // Weights above weight_one for x in [-growth_limit, 0): a path faster than
    // the reference weighs up to e^2 x 2^24 < 2^27, so 16 paths still sum
    // below 2^32.
    static constexpr double growth_limit = 2.0;
    static constexpr std::size_t growth_size = static_cast<std::size_t>(growth_limit) * steps_per_unit + 2;

    // The process's one table, built on first use. It is constant, so every
    // selector on every lcore reads the same 31 KB: one per selector was an
    // L1d's worth per engine, and 1,024 copies in a testbed of 1,024 hosts.
    static const exp_table& shared() noexcept;

    exp_table() noexcept
    {
        for (std::size_t i = 0; i < size; ++i) {
            _values[i] = std::exp(-static_cast<double>(i) / steps_per_unit);
            _weights[i] = static_cast<std::uint32_t>(_values[i] * weight_one + 0.5);
        }
        for (std::size_t i = 0; i < growth_size; ++i) {
            _growth[i] = static_cast<std::uint32_t>(std::exp(static_cast<double>(i) / steps_per_unit) * weight_one + 0.5);
        }
    }

    // exp(-x); x < 0 is treated as 0 (callers subtract the minimum first).
    double operator()(double x) const noexcept
    {
        if (!(x < x_limit)) { // also catches NaN
            return 0.0;
        }
        if (x <= 0.0) {
            return 1.0;
        }
        const double position = x * steps_per_unit;
        const auto index = static_cast<std::size_t>(position);
        const double fraction = position - static_cast<double>(index);
        return _values[index] + (_values[index + 1] - _values[index]) * fraction;
    }

    // exp(-x) * 2^24 rounded, for x given as x * fixed_per_unit (>= 0):
    // integer interpolation only, the per-path step of a distribution rebuild.
    std::uint32_t weight(std::uint64_t x_fixed) const noexcept
    {
        const std::uint64_t index = x_fixed >> 16;
        if (index >= size - 1) {
            return 0;
        }
        const std::uint32_t fraction = static_cast<std::uint32_t>(x_fixed & 0xffff);
        const std::uint32_t hi = _weights[index];
        const std::uint32_t drop = hi - _weights[index + 1];
        return hi - static_cast<std::uint32_t>((static_cast<std::uint64_t>(drop) * fraction) >> 16);
    }

    // exp(+y) * 2^24 for y given as y * fixed_per_unit, 0 <= y <= growth_limit.
    std::uint32_t growth(std::uint64_t y_fixed) const noexcept
    {
        std::uint64_t index = y_fixed >> 16;
        std::uint32_t fraction = static_cast<std::uint32_t>(y_fixed & 0xffff);
        if (index >= growth_size - 1) {
            index = growth_size - 2;
            fraction = 0xffff;
        }
        const std::uint32_t lo = _growth[index];
        const std::uint32_t rise = _growth[index + 1] - lo;
        return lo + static_cast<std::uint32_t>((static_cast<std::uint64_t>(rise) * fraction) >> 16);
    }

private:
    std::array<double, size> _values{};
    std::array<std::uint32_t, size> _weights{};
    std::array<std::uint32_t, growth_size> _growth{};
};

} // namespace laps::softmax
