#include "softmax/exp_table.hpp"
#include "softmax/selector.hpp"

#include <gtest/gtest.h>

#include <cmath>

TEST(ExpTable, RelativeErrorBelow4e5OverTheRange)
{
    const laps::softmax::exp_table e;
    double worst = 0;
    for (double x = 0; x < 39.9; x += 0.001) {
        worst = std::max(worst, std::abs(e(x) - std::exp(-x)) / std::exp(-x));
    }
    EXPECT_LT(worst, 4e-5);
}

TEST(ExpTable, EdgesAreExact)
{
    const laps::softmax::exp_table e;
    EXPECT_EQ(e(0.0), 1.0);
    EXPECT_EQ(e(-3.0), 1.0);
    EXPECT_EQ(e(40.0), 0.0);
    EXPECT_EQ(e(1e300), 0.0);
    EXPECT_EQ(e(std::nan("")), 0.0);
}

TEST(ExpTable, FixedPointWeightsTrackExpWithin1e4)
{
    const laps::softmax::exp_table e;
    for (double x = 0; x < 15.0; x += 0.0137) {
        const auto fixed = static_cast<std::uint64_t>(x * laps::softmax::exp_table::fixed_per_unit);
        const double expected = std::exp(-x) * laps::softmax::exp_table::weight_one;
        // Interpolation error (< 4e-5 relative) plus rounding of both table ends.
        EXPECT_NEAR(static_cast<double>(e.weight(fixed)), expected, expected * 1e-4 + 2.0) << x;
    }
    EXPECT_EQ(e.weight(0), 16777216u);
    EXPECT_EQ(e.weight(static_cast<std::uint64_t>(41.0 * laps::softmax::exp_table::fixed_per_unit)), 0u);
}

TEST(ExpTable, OneSharedTableServesEverySelector)
{
    // The table is constant: a process holds it once, not once per selector
    // (31 KB each, an L1d's worth per engine, softmax/exp_table.hpp).
    const auto& shared = laps::softmax::exp_table::shared();
    EXPECT_EQ(&shared, &laps::softmax::exp_table::shared());
    static_assert(sizeof(laps::softmax::selector) < sizeof(laps::softmax::exp_table) / 8);
    const laps::softmax::exp_table fresh;
    for (std::uint64_t x = 0; x < 41 * static_cast<std::uint64_t>(laps::softmax::exp_table::fixed_per_unit);
         x += 9973) {
        ASSERT_EQ(shared.weight(x), fresh.weight(x)) << x;
    }
}
