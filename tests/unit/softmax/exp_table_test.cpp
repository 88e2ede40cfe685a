#include "softmax/exp_table.hpp"

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
