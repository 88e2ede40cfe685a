// realVal, the clock offset and Alg. 1's doubling at the extremes a wire or
// a long run can produce: latencies of +-2^47 ns (all a 48-bit
// header says), clocks up to 2^62 ns (146 years), round trips up to 2^32 ns,
// probe back-off repeated without end. Built with -fsanitize=undefined and
// no recovery (tests/unit/tables/meson.build): any signed overflow, shift
// or conversion out of range fails the test.
#include "softmax/selector.hpp"
#include "tables/path_table.hpp"

#include <gtest/gtest.h>

#include <limits>

using namespace laps;
using tables::time_ns;

namespace {

constexpr time_ns wire_max = time_ns{1} << 47;

tables::path_table two_paths(bool estimate)
{
    tables::table_spec spec;
    for (tables::path_id pid : {0, 1}) {
        tables::pit_row r;
        r.pid = pid;
        r.base_ns = 10'000;
        r.uncongested_ns = 8'000;
        r.hop_count = 6;
        spec.pit.push_back(r);
    }
    spec.pst = {{*tables::address::parse("10.0.0.2"), {0, 1}}};
    tables::path_table_options o;
    o.pit_capacity = 8;
    o.estimate_clock_offset = estimate;
    o.link_ps_per_byte = 80;
    return tables::path_table(spec, o);
}

} // namespace

TEST(Extremes, LatenciesAtTheWiresLimitsKeepRealValInRange)
{
    const time_ns latencies[] = {-wire_max, -wire_max + 1, -1, 0, 1, wire_max - 1};
    const time_ns clocks[] = {0, 1, time_ns{1} << 40, time_ns{1} << 62};
    const time_ns round_trips[] = {-1, 0, 1, time_ns{0xffffffff}};
    const std::uint32_t sizes[] = {0, 1, 60, 1024, 0xffff};
    for (const bool estimate : {false, true}) {
        for (const time_ns now : clocks) {
            auto t = two_paths(estimate);
            for (const time_ns raw : latencies) {
                for (const time_ns rtt : round_trips) {
                    for (const std::uint32_t bytes : sizes) {
                        std::uint8_t events = 0;
                        t.record_latency(0, tables::path_table::latency_sample{raw, bytes, rtt, bytes}, now, &events);
                        const time_ns real = t.path(0).real();
                        ASSERT_GE(real, 1);
                        ASSERT_LE(real, tables::max_real_ns);
                    }
                }
            }
            // A long idle set: the skew is applied over 2^62 ns.
            (void)t.clock_offset(0, std::numeric_limits<time_ns>::max() / 2);
        }
    }
}

// Alg. 1 line 7, bounded: realVal doubles per probe up to the cap, so a path
// that comes back is probed again within 2 x the cap; a measured realVal
// above the cap is left as it is, and nothing overflows however often.
TEST(Extremes, ProbeBackoffIsCappedAndNeverOverflows)
{
    auto t = two_paths(false);
    time_ns now = 1;
    for (int i = 0; i < 200; ++i) {
        t.mark_probed(0, now);
        now += 1'000;
    }
    EXPECT_EQ(t.path(0).real(), 10 * common::ns_per_ms) << "the default cap";

    t.record_latency(1, tables::max_real_ns, now);
    for (int i = 0; i < 200; ++i) {
        t.mark_probed(1, now);
        now += 1'000;
    }
    EXPECT_EQ(t.path(1).real(), tables::max_real_ns);
}

TEST(Extremes, SelectionAtTheLargestRealValsAndTimes)
{
    auto t = two_paths(false);
    t.record_latency(0, tables::max_real_ns, time_ns{1} << 62);
    t.record_latency(1, tables::max_real_ns - 1, time_ns{1} << 62);
    softmax::selector_params p;
    p.probing = true;
    softmax::selector s(p, 1);
    for (const time_ns now : {time_ns{0}, time_ns{1} << 62, std::numeric_limits<time_ns>::max() / 2}) {
        const auto c = s.select(t, 0, now);
        EXPECT_TRUE(c.has_path);
    }
}
