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
