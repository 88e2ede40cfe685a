// Reunion's elephant filter (seed 000, §3.2): a Count-Min Sketch never
// underestimates, and with enough width mice stay below an elephant's count.
#include "policy/count_min.hpp"
#include "policy/selective.hpp"

#include <gtest/gtest.h>

using namespace laps::policy;

TEST(Reunion_CountMin, NeverUnderestimatesAndSeparatesElephantsFromMice)
{
    count_min cms(4, 256, 7);
    for (std::uint64_t mouse = 0; mouse < 500; ++mouse) {
        cms.add(mouse, 1000);
    }
    for (int i = 0; i < 100; ++i) {
        cms.add(9999, 10'000);
    }
    EXPECT_GE(cms.estimate(9999), 1'000'000u);
    std::uint64_t worst_mouse = 0;
    for (std::uint64_t mouse = 0; mouse < 500; ++mouse) {
        EXPECT_GE(cms.estimate(mouse), 1000u);
        worst_mouse = std::max(worst_mouse, cms.estimate(mouse));
    }
    EXPECT_LT(worst_mouse, 100'000u) << "a mouse's estimate stays far below an elephant's";
    cms.clear();
    EXPECT_EQ(cms.estimate(9999), 0u);
}

TEST(SelectiveSpraying, SpraysOnlyElephantsByPostedOrSentBytes)
{
    const selective_config posted{1'000'000, elephant_rule::posted};
    EXPECT_TRUE(sprays(posted, 2'000'000, 0));
    EXPECT_FALSE(sprays(posted, 999'999, 5'000'000));
    const selective_config sent{1'000'000, elephant_rule::sent};
    EXPECT_FALSE(sprays(sent, 2'000'000, 999'999));
    EXPECT_TRUE(sprays(sent, 2'000'000, 1'000'000));
}
