// PIT and path sets (paper §III-C, Fig. 4): building from rows, the version
// counter that drives the selector's cache, latency recording with and
// without a clock offset.
#include "tables/path_table.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>

using namespace laps::tables;

namespace {

pit_row row(path_id pid, std::int64_t base_ns, std::int64_t uncongested_ns = 0)
{
    pit_row r;
    r.pid = pid;
    r.base_ns = base_ns;
    r.uncongested_ns = uncongested_ns;
    return r;
}

table_spec two_destinations()
{
    table_spec spec;
    spec.pit = {row(0, 10'000, 8'000), row(1, 15'000, 12'000), row(2, 5'000)};
    spec.pst = {{*address::parse("10.0.0.2"), {0, 1}}, {*address::parse("fd00::3"), {2}}};
    return spec;
}

path_table_options options(bool estimate_offset = true)
{
    path_table_options o;
    o.pit_capacity = 64;
    o.estimate_clock_offset = estimate_offset;
    return o;
}

} // namespace

TEST(PathTable, BuildsSetsInPstOrderAndLinksPidsToThem)
{
    const path_table t(two_destinations(), options());
    ASSERT_EQ(t.set_count(), 2u);
    EXPECT_EQ(t.set(0).count, 2);
    EXPECT_EQ(t.set(0).pids[1], 1);
    EXPECT_EQ(t.set(0).max_base_ns, 15'000);
    EXPECT_EQ(t.path(1).set_index(), 0u);
    EXPECT_EQ(t.path(1).slot, 1);
    EXPECT_EQ(t.path(2).set_index(), 1u);
    // Unmeasured paths start at their baseline; uncongested defaults to baseVal.
    EXPECT_EQ(t.path(0).real(), 10'000);
    EXPECT_EQ(t.path(2).uncongested_ns, 5'000);
}

TEST(PathTable, RejectsDanglingDuplicateAndSharedPidsNamingTheRow)
{
    auto spec = two_destinations();
    spec.pst[1].pids = {2, 7};
    EXPECT_THROW(
        {
            try {
                path_table t(spec, options());
            } catch (const table_error& e) {
                EXPECT_NE(std::string(e.what()).find("pst row 1 (dst fd00::3): pid 7 has no pit row"),
                          std::string::npos)
                    << e.what();
                throw;
            }
        },
        table_error);

    spec = two_destinations();
    spec.pst[1].pids = {1};
    EXPECT_THROW(path_table(spec, options()), table_error);

    spec = two_destinations();
    spec.pit.push_back(row(0, 1));
    EXPECT_THROW(path_table(spec, options()), table_error);

    spec = two_destinations();
    spec.pit[0].pid = 64; // capacity is 64
    EXPECT_THROW(path_table(spec, options()), table_error);
}

TEST(PathTable, EveryChangeOfAMemberBumpsItsSetVersionOnly)
{
    path_table t(two_destinations(), options());
    const auto v0 = t.set(0).current_version();
    const auto v1 = t.set(1).current_version();
    t.record_latency(1, 20'000, 100);
    EXPECT_EQ(t.set(0).current_version(), v0 + 1);
    t.mark_probed(0, 200);
    EXPECT_EQ(t.set(0).current_version(), v0 + 2);
    t.set_valid(0, false);
    EXPECT_EQ(t.set(0).current_version(), v0 + 3);
    t.set_valid(0, false); // no change, no bump
    EXPECT_EQ(t.set(0).current_version(), v0 + 3);
    EXPECT_EQ(t.set(1).current_version(), v1);
}

TEST(PathTable, RecordLatencyUpdatesRealValAndTimeAlg2Lines1To2)
{
    path_table t(two_destinations(), options(false));
    EXPECT_EQ(t.record_latency(1, 21'000, 5'000), 0u);
    EXPECT_EQ(t.path(1).real(), 21'000);
    EXPECT_EQ(t.path(1).time(), 5'000);
}

// docs/design.md §3.7: with unsynchronised clocks a constant offset is added to every
// measurement of a pair. The estimate removes it, so realVal can be compared
// with baseVal and used as a time interval.
TEST(PathTable, ClockOffsetIsRemovedFromMeasurements)
{
    const std::int64_t offset = -3'000'000; // receiver clock 3 ms behind
    path_table t(two_destinations(), options(true));
    // Path 0 idle (true delay 8 us), path 1 queued by 5 us (true delay 17 us).
    t.record_latency(0, offset + 8'000, 1);
    t.record_latency(1, offset + 17'000, 2);
    EXPECT_EQ(t.path(0).real(), 8'000);
    EXPECT_EQ(t.path(1).real(), 17'000);
    EXPECT_EQ(t.clock_offset(0, 2), offset);
}

TEST(PathTable, MarkProbedDoublesRealValAndResetsTime)
{
    path_table t(two_destinations(), options(false));
    t.record_latency(0, 9'000, 10);
    t.mark_probed(0, 50'000);
    EXPECT_EQ(t.path(0).real(), 18'000);
    EXPECT_EQ(t.path(0).time(), 50'000);
}

TEST(PathTable, TAndTComeFromValidPathsOnly)
{
    path_table t(two_destinations(), options(false));
    t.record_latency(0, 30'000, 1);
    t.record_latency(1, 16'000, 1);
    EXPECT_EQ(t.max_base_valid(0), 15'000);
    EXPECT_EQ(t.min_real_valid(0, 1, false), 16'000);
    t.set_valid(1, false);
    EXPECT_EQ(t.max_base_valid(0), 10'000);
    EXPECT_EQ(t.min_real_valid(0, 1, false), 30'000);
}

// A path back up starts from its baseline, as a new one: a realVal from
// before it went down (here a 9 ms stall) would keep it unused until a probe.
TEST(PathTable, APathBackUpStartsFromItsBaseline)
{
    path_table t(two_destinations(), options(false));
    t.record_latency(1, 9'000'000, 5'000);
    t.set_valid(1, false);
    EXPECT_EQ(t.path(1).real(), 9'000'000); // down: nothing changes
    t.set_valid(1, true);
    EXPECT_EQ(t.path(1).real(), 15'000);
    EXPECT_EQ(t.path(1).time(), 0);
}

// Without probing, a path that nobody measured for longer than 2 x its
// realVal does not count for t, so a stale low value cannot hide congestion
// on the measured paths; with every path stale, all count. With probing
// (only_fresh false), Alg. 2's t over all valid paths.
TEST(PathTable, TIgnoresStaleMeasurementsWhenNothingProbes)
{
    path_table t(two_destinations(), options(false));
    t.record_latency(0, 9'000, 0);       // stale after 18 us
    t.record_latency(1, 40'000, 50'000); // fresh until 130 us
    EXPECT_EQ(t.min_real_valid(0, 10'000, true), 9'000);
    EXPECT_EQ(t.min_real_valid(0, 60'000, true), 40'000);
    EXPECT_EQ(t.min_real_valid(0, 500'000, true), 9'000); // both stale
    EXPECT_EQ(t.min_real_valid(0, 60'000, false), 9'000);
}

// The fair rate control's signal (docs/congestion.md): the
// smallest queue, realVal - uncongested delay (not baseVal: pid 0's margin is
// 2 us, pid 1's 3 us), over the valid members measured within 2 x realVal;
// none fresh: no_queue. A realVal below the uncongested delay is no queue.
TEST(PathTable, MinQueueIsOverFreshValidPathsAgainstTheUncongestedDelay)
{
    path_table t(two_destinations(), options(false));
    // Before any measurement realVal = baseVal: the "queue" is the margin.
    EXPECT_EQ(t.min_queue_fresh(0, 0), 2'000);
    t.record_latency(0, 11'000, 0);      // queue 3 us, fresh until 22 us
    t.record_latency(1, 14'000, 10'000); // queue 2 us, fresh until 38 us
    EXPECT_EQ(t.min_queue_fresh(0, 20'000), 2'000);
    t.set_valid(1, false);
    EXPECT_EQ(t.min_queue_fresh(0, 20'000), 3'000);
    EXPECT_EQ(t.min_queue_fresh(0, 30'000), path_table::no_queue); // pid 0 stale, pid 1 invalid
    t.set_valid(1, true); // back at its baseline (margin 3 us), time 0: fresh until 30 us
    EXPECT_EQ(t.min_queue_fresh(0, 30'000), 3'000);
    t.record_latency(0, 7'000, 30'000); // below its uncongested 8 us
    EXPECT_EQ(t.min_queue_fresh(0, 31'000), 0);
}

// Alg. 2's t from a reader's cache (docs/pipeline.md "Rates"): after any sequence of
// ACKs, probes, path failures and recoveries, at any later time, the cached
// minimum equals the full rescan, with and without the freshness rule, and
// also when more changes happened than the change word remembers.
TEST(PathTable, CachedTEqualsTheRescanAfterAnyChanges)
{
    table_spec spec;
    for (path_id pid = 0; pid < 8; ++pid) {
        spec.pit.push_back(row(pid, 5'000 + 700 * pid));
    }
    spec.pst = {{*address::parse("10.0.0.2"), {0, 1, 2, 3, 4, 5, 6, 7}}};
    path_table t(spec, options(false));
    set_minimum fresh_cache;
    set_minimum all_cache;
    std::mt19937_64 rng(2);
    time_ns now = 1'000;
    std::size_t rescans_avoided = 0;
    for (int step = 0; step < 200'000; ++step) {
        // 0-6 changes between two looks (the word remembers 4).
        const int changes = static_cast<int>(rng() % 7);
        for (int c = 0; c < changes; ++c) {
            const auto pid = static_cast<path_id>(rng() % 8);
            switch (rng() % 10) {
            case 0:
                t.set_valid(pid, (rng() & 1) != 0);
                break;
            case 1:
                t.mark_probed(pid, now);
                break;
            default:
                t.record_latency(pid, 3'000 + static_cast<time_ns>(rng() % 40'000), now);
                break;
            }
        }
        now += static_cast<time_ns>(rng() % (rng() % 16 == 0 ? 200'000 : 3'000));
        const time_ns want_fresh = t.min_real_valid(0, now, true);
        const time_ns want_all = t.min_real_valid(0, now, false);
        const std::uint32_t version = fresh_cache.version;
        ASSERT_EQ(t.min_real_valid(0, now, true, fresh_cache), want_fresh) << "step " << step;
        ASSERT_EQ(t.min_real_valid(0, now, false, all_cache), want_all) << "step " << step;
        rescans_avoided += version != std::numeric_limits<std::uint32_t>::max() && changes > 0 ? 1 : 0;
    }
    EXPECT_GT(rescans_avoided, 100'000u);
}
