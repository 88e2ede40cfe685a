// Every engine counter is documented in docs/pipeline.md under its name, and
// names follow <stage>_<what>.
#include "pipeline/counters.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

TEST(Counters, EveryCounterIsDocumentedByName)
{
    std::ifstream in(LAPS_SOURCE_DIR "/docs/pipeline.md");
    ASSERT_TRUE(in) << "docs/pipeline.md missing";
    std::stringstream doc;
    doc << in.rdbuf();
    for (const auto& c : laps::pipeline::engine_counter_list) {
        EXPECT_NE(doc.str().find("| `" + std::string(c.name) + "` |"), std::string::npos)
            << c.name << " is not in docs/pipeline.md";
    }
}

TEST(Counters, NamesAreUniqueAndHaveAStage)
{
    std::set<std::string_view> seen;
    for (const auto& c : laps::pipeline::engine_counter_list) {
        EXPECT_TRUE(seen.insert(c.name).second) << c.name;
        EXPECT_NE(c.name.find('_'), std::string_view::npos) << c.name;
        EXPECT_FALSE(c.help.empty()) << c.name;
    }
    EXPECT_EQ(seen.size(), sizeof(laps::pipeline::engine_counters) / sizeof(std::uint64_t));
}

// The testbed summed reorder_held_max over hosts (1,151 where the largest was
// 89): over several engines a high-water mark is the largest.
TEST(Counters, AccumulateSumsCountsAndTakesTheLargestHighWaterMark)
{
    laps::pipeline::engine_counters total;
    laps::pipeline::engine_counters a;
    a.data_sent = 5;
    a.reorder_held_max = 89;
    laps::pipeline::engine_counters b;
    b.data_sent = 7;
    b.reorder_held_max = 40;
    laps::pipeline::accumulate(total, a);
    laps::pipeline::accumulate(total, b);
    EXPECT_EQ(total.data_sent, 12u);
    EXPECT_EQ(total.reorder_held_max, 89u);
}
