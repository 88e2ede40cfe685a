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

namespace laps::softmax {

class exp_table {
public:
    static constexpr double x_limit = 40.0;
    static constexpr int steps_per_unit = 64;
    static constexpr std::size_t size = static_cast<std::size_t>(x_limit) * steps_per_unit + 2;

    exp_table() noexcept
    {
        for (std::size_t i = 0; i < size; ++i) {
            _values[i] = std::exp(-static_cast<double>(i) / steps_per_unit);
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

private:
    std::array<double, size> _values{};
};

} // namespace laps::softmax
