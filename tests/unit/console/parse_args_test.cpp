// Console arguments rte_cmdline has no token for: every bad value is an error
// that names the argument.
#include "console/backend.hpp"
#include "console/parse_args.hpp"

#include <gtest/gtest.h>

using namespace laps;
using namespace laps::console;

namespace {

std::string error_of(const std::function<void()>& f)
{
    try {
        f();
    } catch (const console_error& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST(ConsoleArgs, Numbers)
{
    EXPECT_DOUBLE_EQ(parse_number("0.25", "beta", 0, 10), 0.25);
    EXPECT_EQ(error_of([] { parse_number("fast", "beta", 0, 10); }), "beta: 'fast' is not a number");
    EXPECT_EQ(error_of([] { parse_number("11", "beta", 0, 10); }), "beta: 11 is out of range [0, 10]");
    EXPECT_EQ(error_of([] { parse_number("1e999", "beta", 0, 10); }), "beta: '1e999' is not a number");
    EXPECT_EQ(error_of([] { parse_number("2x", "alpha", 0, 10); }), "alpha: '2x' is not a number");
}

TEST(ConsoleArgs, PidLists)
{
    EXPECT_EQ(parse_pid_list("3"), (std::vector<tables::path_id>{3}));
    EXPECT_EQ(parse_pid_list("0,1,2"), (std::vector<tables::path_id>{0, 1, 2}));
    EXPECT_EQ(error_of([] { parse_pid_list("0,,1"); }), "pid: '' is not an integer");
    EXPECT_EQ(error_of([] { parse_pid_list("0,70000"); }), "pid: 70000 is out of range [0, 65535]");
    EXPECT_EQ(error_of([] { parse_pid_list("4,4"); }), "pids: 4 is listed twice");
    EXPECT_EQ(error_of([] { parse_pid_list("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16"); }),
              "pids: 17 given, at most 16");
}

TEST(ConsoleArgs, PitRows)
{
    const auto r = parse_pit_row(7, "base_ns=20000 uncongested_ns=15000 anchors=42,43 hops=4 valid=false");
    EXPECT_EQ(r.pid, 7);
    EXPECT_EQ(r.base_ns, 20000);
    EXPECT_EQ(r.uncongested_ns, 15000);
    EXPECT_EQ(r.anchor_count, 2);
    EXPECT_EQ(r.anchors[1], 43u);
    EXPECT_EQ(r.hop_count, 4);
    EXPECT_FALSE(r.valid);
    EXPECT_EQ(error_of([] { parse_pit_row(1, "hops=2"); }), "pit add: base_ns=<ns> is required");
    // A key given twice is an error, not the last one winning.
    EXPECT_EQ(error_of([] { parse_pit_row(10, "base_ns=1 base_ns=2"); }), "pit add: base_ns given twice");
    EXPECT_EQ(error_of([] { parse_pit_row(1, "base_ns=10 colour=red"); }),
              "pit add: unknown key 'colour' (known: base_ns, uncongested_ns, anchors, hops, valid)");
    EXPECT_EQ(error_of([] { parse_pit_row(1, "base_ns=10 anchors=1,2,3,4,5"); }), "anchors: 5 given, at most 4");
    EXPECT_EQ(error_of([] { parse_pit_row(1, "base_ns"); }), "pit add: 'base_ns' is not key=value");
    EXPECT_EQ(error_of([] { parse_pit_row(1, "base_ns=10 uncongested_ns=20"); }),
              "pit add: uncongested_ns must not exceed base_ns");
    EXPECT_EQ(error_of([] { parse_pit_row(1, "base_ns=10 valid=maybe"); }),
              "valid: expected true or false, got 'maybe'");
}
