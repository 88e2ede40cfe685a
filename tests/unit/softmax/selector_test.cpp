// Path selection, Eq. 1 and Alg. 1 of the paper (§II-E, §III-E).
#include "softmax/selector.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <map>

using namespace laps;
using tables::path_id;

namespace {

// One destination with the given baseVals; pids 0..k-1; clocks synchronised
// so that recorded latencies are taken as they are.
tables::path_table one_destination(std::initializer_list<std::int64_t> base_ns)
{
    tables::table_spec spec;
    tables::pst_row dst{tables::address::ipv4(0x0a000002), {}};
    path_id pid = 0;
    for (const auto b : base_ns) {
        tables::pit_row r;
        r.pid = pid;
        r.base_ns = b;
        spec.pit.push_back(r);
        dst.pids.push_back(pid++);
    }
    spec.pst.push_back(dst);
    tables::path_table_options o;
    o.pit_capacity = 64;
    o.estimate_clock_offset = false;
    return tables::path_table(spec, o);
}

softmax::selector make(softmax::beta_params beta, bool probing = false, std::uint64_t seed = 42)
{
    softmax::selector_params p;
    p.beta = beta;
    p.probing = probing;
    p.seed = seed;
    return softmax::selector(p, 1); // one set: set 0
}

std::map<path_id, std::uint64_t> draw_many(softmax::selector& s, tables::path_table& t, std::uint64_t n)
{
    std::map<path_id, std::uint64_t> counts;
    for (std::uint64_t i = 0; i < n; ++i) {
        const auto c = s.select(t, 0, 1);
        EXPECT_TRUE(c.has_path);
        ++counts[c.path];
    }
    return counts;
}

} // namespace

// §II-E: "When beta = 0, the strategy degenerates into RPS": uniform shares.
TEST(Selector, Eq1BetaZeroIsUniformSprayingWithin1PercentAtK8)
{
    auto t = one_destination({1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000});
    for (path_id p = 0; p < 8; ++p) {
        t.record_latency(p, 1000 * (p + 1), 0);
    }
    auto s = make(softmax::beta_params::fixed_per_us(0.0));
    const std::uint64_t n = 1'000'000;
    const auto counts = draw_many(s, t, n);
    ASSERT_EQ(counts.size(), 8u);
    for (const auto& [pid, c] : counts) {
        EXPECT_NEAR(static_cast<double>(c) / n, 1.0 / 8, 0.01 / 8) << "pid " << pid;
    }
}

// Eq. 1: P(10us) / P(15us) = exp(-beta * 10us) / exp(-beta * 15us) = exp(5us * beta).
TEST(Selector, Eq1SharesOfTwoPathsMatchTheExpRatioWithin1Percent)
{
    auto t = one_destination({10'000, 15'000});
    t.record_latency(0, 10'000, 0);
    t.record_latency(1, 15'000, 0);
    const double per_us = 0.2;
    auto s = make(softmax::beta_params::fixed_per_us(per_us));
    const std::uint64_t n = 1'000'000;
    const auto counts = draw_many(s, t, n);
    const double expected_share0 = 1.0 / (1.0 + std::exp(-per_us * 5.0));
    EXPECT_NEAR(static_cast<double>(counts.at(0)) / n, expected_share0, 0.01 * expected_share0);
    const double ratio = static_cast<double>(counts.at(0)) / static_cast<double>(counts.at(1));
    EXPECT_NEAR(ratio, std::exp(per_us * 5.0), 0.01 * std::exp(per_us * 5.0) * 2);
}

// The authors' simulator: beta = 1 / max baseVal of the pair's paths.
TEST(Selector, NormalisedBetaUsesTheLongestBaseVal)
{
    auto t = one_destination({10'000, 20'000});
    t.record_latency(0, 10'000, 0);
    t.record_latency(1, 20'000, 0);
    auto s = make(softmax::beta_params::normalized_alpha(1.0));
    const std::uint64_t n = 1'000'000;
    const auto counts = draw_many(s, t, n);
    const double expected_share0 = 1.0 / (1.0 + std::exp(-10'000.0 / 20'000.0));
    EXPECT_NEAR(static_cast<double>(counts.at(0)) / n, expected_share0, 0.01 * expected_share0);
}

TEST(Selector, LargeBetaIsArgmaxAndSplitsTies)
{
    auto t = one_destination({10'000, 10'000, 12'000});
    t.record_latency(0, 10'000, 0);
    t.record_latency(1, 10'000, 0);
    t.record_latency(2, 10'500, 0);
    auto s = make(softmax::beta_params::fixed_per_us(1000.0));
    const auto counts = draw_many(s, t, 100'000);
    EXPECT_EQ(counts.count(2), 0u);
    EXPECT_NEAR(static_cast<double>(counts.at(0)) / 100'000, 0.5, 0.01);
}

TEST(Selector, InvalidPathIsNeverChosenAndAllInvalidGivesNoPath)
{
    auto t = one_destination({1000, 1000, 1000});
    t.set_valid(1, false);
    auto s = make(softmax::beta_params::fixed_per_us(0.0));
    const auto counts = draw_many(s, t, 100'000);
    EXPECT_EQ(counts.count(1), 0u);
    EXPECT_GT(counts.at(0), 0u);
    EXPECT_GT(counts.at(2), 0u);

    t.set_valid(0, false);
    t.set_valid(2, false);
    const auto c = s.select(t, 0, 1);
    EXPECT_FALSE(c.has_path);
    EXPECT_FALSE(c.has_probe); // invalid paths are not probed either
}

// Eq. 1 must hold for the largest realVal an entry holds (tables::max_real_ns,
// 2^47 ns: about all the header's 48-bit latency can say).
TEST(Selector, HugeLatenciesGiveNoNanOrInf)
{
    const std::int64_t huge = laps::tables::max_real_ns;
    auto t = one_destination({huge, huge});
    t.record_latency(0, huge - 1000, 0);
    t.record_latency(1, huge, 0);
    auto s = make(softmax::beta_params::fixed_per_us(0.001)); // exp(-1e-6 * 1000) per path
    s.rebuild(t, 0);
    const auto& c = s.cache(0);
    EXPECT_GT(c.total, 0u);
    EXPECT_GT(c.cumulative[0], 0u);
    EXPECT_GT(c.cumulative[1], c.cumulative[0]);
    // Also with a beta so large that exp(-beta * d) underflows without the shift.
    auto argmax = make(softmax::beta_params::fixed_per_us(1e6));
    argmax.rebuild(t, 0);
    EXPECT_EQ(argmax.cache(0).cumulative[0], argmax.cache(0).total);
}

// The distribution is rebuilt only when a member's PIT entry changed.
TEST(Selector, DistributionIsCachedUntilThePitEntryVersionMoves)
{
    auto t = one_destination({10'000, 20'000});
    auto s = make(softmax::beta_params::fixed_per_us(1.0));
    s.select(t, 0, 1);
    const auto built = s.cache(0).built_version;
    EXPECT_EQ(built, t.set(0).current_version());
    auto& c = s.cache(0);
    c.cumulative[0] = 0; // a marker that a rebuild would overwrite
    s.select(t, 0, 1);
    EXPECT_EQ(c.cumulative[0], 0u);
    t.record_latency(0, 12'000, 2);
    s.select(t, 0, 2);
    EXPECT_NE(c.cumulative[0], 0u);
    EXPECT_EQ(c.built_version, t.set(0).current_version());
}

TEST(Selector, SameSeedSameChoices)
{
    auto t1 = one_destination({1000, 2000, 3000});
    auto t2 = one_destination({1000, 2000, 3000});
    auto a = make(softmax::beta_params::normalized_alpha(1.0), false, 7);
    auto b = make(softmax::beta_params::normalized_alpha(1.0), false, 7);
    for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(a.select(t1, 0, i).path, b.select(t2, 0, i).path);
    }
}

// Alg. 1 lines 5-8: a path not updated for more than 2 x realVal is probed,
// its realVal doubles and its time resets; it is not probed again before
// 2 x the new realVal has passed.
TEST(Selector, Alg1StalePathIsProbedRealValDoublesAndBacksOff)
{
    auto t = one_destination({10'000, 10'000});
    t.record_latency(0, 10'000, 0);
    t.record_latency(1, 10'000, 0);
    auto s = make(softmax::beta_params::fixed_per_us(0.0), true);

    // At 20 us neither is stale yet (now - time must exceed 2 x realVal).
    EXPECT_FALSE(s.select(t, 0, 20'000).has_probe);
    // Keep path 0 fresh; path 1 goes quiet.
    t.record_latency(0, 10'000, 15'000);
    auto c = s.select(t, 0, 20'001);
    ASSERT_TRUE(c.has_probe);
    EXPECT_EQ(c.probe, 1);
    EXPECT_EQ(t.path(1).real(), 20'000);
    EXPECT_EQ(t.path(1).time(), 20'001);

    // Not again until 2 x 20 us after the probe.
    t.record_latency(0, 10'000, 60'000);
    EXPECT_FALSE(s.select(t, 0, 60'001).has_probe);
    c = s.select(t, 0, 60'002);
    ASSERT_TRUE(c.has_probe);
    EXPECT_EQ(c.probe, 1);
    EXPECT_EQ(t.path(1).real(), 40'000);
}

// Alg. 1 after a policy without probing: such a selector does not track when
// paths go stale, so switching back to a probing policy must read every
// entry afresh. Here the path came back up while spray was in force; its
// staleness must then be known again, and the stale path probed.
TEST(Selector, Alg1ProbesAgainAfterAPolicyWithoutProbing)
{
    auto t = one_destination({10'000});
    t.record_latency(0, 10'000, 0);
    auto s = make(softmax::beta_params::fixed_per_us(0.0), true);
    EXPECT_FALSE(s.select(t, 0, 1'000).has_probe);
    t.set_valid(0, false);
    EXPECT_FALSE(s.select(t, 0, 2'000).has_path); // seen down: never stale
    s.set_policy(softmax::policy::spray);
    t.set_valid(0, true);
    EXPECT_TRUE(s.select(t, 0, 3'000).has_path); // seen up, its time not read
    s.set_policy(softmax::policy::laps);
    const auto c = s.select(t, 0, 1'000'000); // last measured at 0: stale
    ASSERT_TRUE(c.has_probe);
    EXPECT_EQ(c.probe, 0);
}

// The FPGA prototype probes at most one stale path per packet, chosen at
// random among the stale ones.
TEST(Selector, Alg1AtMostOneProbePerPacketRandomAmongStale)
{
    std::array<int, 4> probed{};
    for (std::uint64_t seed = 1; seed <= 400; ++seed) {
        auto t = one_destination({1000, 1000, 1000, 1000});
        auto s = make(softmax::beta_params::fixed_per_us(0.0), true, seed);
        const auto c = s.select(t, 0, 1'000'000); // all four stale
        ASSERT_TRUE(c.has_probe);
        ++probed[c.probe];
        int doubled = 0;
        for (path_id p = 0; p < 4; ++p) {
            doubled += t.path(p).real_ns == 2000 ? 1 : 0;
        }
        EXPECT_EQ(doubled, 1);
    }
    for (const int n : probed) {
        EXPECT_GT(n, 60); // ~100 each
    }
}

TEST(Selector, SetBetaInvalidatesCachedDistributions)
{
    auto t = one_destination({10'000, 20'000});
    t.record_latency(0, 10'000, 0);
    t.record_latency(1, 20'000, 0);
    auto s = make(softmax::beta_params::fixed_per_us(0.0));
    s.select(t, 0, 1);
    EXPECT_EQ(s.cache(0).cumulative[0] * 2, s.cache(0).total);
    s.set_beta(softmax::beta_params::fixed_per_us(10.0));
    s.select(t, 0, 1);
    EXPECT_GT(s.cache(0).cumulative[0] * 2, s.cache(0).total);
}

// The comparison policies run on the same tables.
TEST(Selector, SprayIgnoresLatencyEcmpPinsAFlowFastestTakesTheMinimum)
{
    auto t = one_destination({10'000, 20'000, 30'000});
    t.record_latency(0, 10'000, 0);
    t.record_latency(1, 20'000, 0);
    t.record_latency(2, 30'000, 0);

    softmax::selector_params p;
    p.policy = softmax::policy::spray;
    softmax::selector spray(p, 1);
    std::map<path_id, int> counts;
    for (int i = 0; i < 300'000; ++i) {
        ++counts[spray.select(t, 0, 1).path];
    }
    for (const auto& [pid, n] : counts) {
        EXPECT_NEAR(n / 300'000.0, 1.0 / 3, 0.01) << pid;
    }

    p.policy = softmax::policy::ecmp;
    softmax::selector ecmp(p, 1);
    std::map<path_id, int> per_flow_paths;
    for (std::uint32_t flow = 0; flow < 300; ++flow) {
        const auto first = ecmp.select(t, 0, 1, flow * 2654435761u).path;
        for (int i = 0; i < 10; ++i) {
            ASSERT_EQ(ecmp.select(t, 0, 1, flow * 2654435761u).path, first);
        }
        ++per_flow_paths[first];
    }
    EXPECT_EQ(per_flow_paths.size(), 3u); // flows spread over the paths
    t.set_valid(per_flow_paths.begin()->first, false);
    for (std::uint32_t flow = 0; flow < 100; ++flow) {
        EXPECT_NE(ecmp.select(t, 0, 1, flow).path, per_flow_paths.begin()->first);
    }
    t.set_valid(per_flow_paths.begin()->first, true);

    p.policy = softmax::policy::fastest;
    softmax::selector fastest(p, 1);
    for (int i = 0; i < 1000; ++i) {
        EXPECT_EQ(fastest.select(t, 0, 1).path, 0);
    }
    EXPECT_EQ(softmax::find_policy("ecmp"), softmax::policy::ecmp);
    EXPECT_FALSE(softmax::find_policy("conga"));
}

// An ACK recomputes only the weight it moved, and only when it moved beyond
// the selection quantum (beta x change > 1/64); the distribution must stay
// within the quantum's bound of the one a full rebuild gives (every weight
// within exp(+-1/64), so every running share within exp(+-1/32), plus
// rounding) through any sequence of latency changes, validity changes and
// probes.
// Run with and without Alg. 1's probing: without it the selector does not
// track the entries' times (stale_at stays at its maximum).
class SelectorRebuild : public ::testing::TestWithParam<bool> {};

TEST_P(SelectorRebuild, IncrementalRebuildStaysWithinTheQuantumOfAFullRebuild)
{
    const bool probing = GetParam();
    auto inc = one_destination({10'000, 12'000, 15'000, 20'000, 22'000, 30'000, 31'000, 40'000});
    auto full = one_destination({10'000, 12'000, 15'000, 20'000, 22'000, 30'000, 31'000, 40'000});
    // One selector per table: each keeps its own distribution of set 0.
    auto s = make(softmax::beta_params::normalized_alpha(3.0), probing);
    auto s_full = make(softmax::beta_params::normalized_alpha(3.0), probing);
    common::rng r(99);
    for (int step = 0; step < 20'000; ++step) {
        const auto pid = static_cast<path_id>(r.below(8));
        const std::int64_t now = step * 100;
        switch (r.below(20)) {
        case 0:
            inc.set_valid(pid, !inc.path(pid).usable());
            full.set_valid(pid, !full.path(pid).usable());
            break;
        case 1:
            inc.mark_probed(pid, now);
            full.mark_probed(pid, now);
            break;
        default: {
            // Latencies wander from 5 us to 400 us: the reference must move.
            const std::int64_t latency = 5'000 + static_cast<std::int64_t>(r.below(step < 10'000 ? 60'000 : 400'000));
            inc.record_latency(pid, latency, now);
            full.record_latency(pid, latency, now);
        }
        }
        s.rebuild(inc, 0);
        s_full.full_rebuild(full, 0);
        const auto& a = s.cache(0);
        const auto& b = s_full.cache(0);
        ASSERT_EQ(a.total == 0, b.total == 0) << step;
        ASSERT_EQ(a.stale_at, b.stale_at) << step;
        if (!probing) {
            ASSERT_EQ(a.stale_at, std::numeric_limits<std::int64_t>::max()) << step;
        }
        if (b.total == 0) {
            continue;
        }
        // The quantum's relative bound, plus the fixed-point rounding
        // the exact version was held to (1e-4 of the total).
        const double bound = std::exp(2 * softmax::selection_quantum) - 1;
        for (std::size_t i = 0; i < 8; ++i) {
            const double share_a = static_cast<double>(a.cumulative[i]) / a.total;
            const double share_b = static_cast<double>(b.cumulative[i]) / b.total;
            ASSERT_NEAR(share_a, share_b, bound * share_b + 1e-4) << "step " << step << " slot " << i;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Probing, SelectorRebuild, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "ProbingOn" : "ProbingOff"; });

// The quantum itself: a realVal that moves by less than 1/64 of 1/beta
// leaves the distribution as it was (no weight recomputed); one that moves
// by more changes it.
TEST(Selector, MovesWithinTheSelectionQuantumKeepTheDistribution)
{
    auto t = one_destination({10'000, 12'000});
    auto s = make(softmax::beta_params::normalized_alpha(3.0));
    s.rebuild(t, 0);
    const auto before = s.cache(0).cumulative;
    const std::int64_t quantum = s.cache(0).quantum_ns;
    ASSERT_GT(quantum, 0);
    ASSERT_LT(quantum, 1'000);
    t.record_latency(1, 12'000 + quantum, 5);
    s.rebuild(t, 0);
    EXPECT_EQ(s.cache(0).cumulative, before);
    EXPECT_EQ(s.cache(0).built_version, t.set(0).current_version());
    t.record_latency(1, 12'000 + 3 * quantum, 6);
    s.rebuild(t, 0);
    EXPECT_NE(s.cache(0).cumulative, before);
}
