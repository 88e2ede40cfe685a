// DCQCN's reaction point (Zhu et al., SIGCOMM 2015, §3; the HPCC ns-3
// artefact's "Mellanox" version) and the artefact's DCTCP, on their own:
// the numbers follow from the parameters, step by step.
#include "fabric/hosts/dcqcn.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace laps::fabric;
using namespace laps::fabric::hosts;

namespace {
constexpr time_ns us = 1000;
constexpr double line = 100e9;
} // namespace

TEST(DCQCN_ReactionPoint, NoCnpNoCut)
{
    dcqcn_params p;
    dcqcn_rp rp(p, line);
    EXPECT_DOUBLE_EQ(rp.rate_bps(), line);
    EXPECT_EQ(rp.rp_timer_due(), no_time);
    EXPECT_FALSE(rp.on_decrease_check(10 * us)) << "a check without a CNP changes nothing";
    EXPECT_DOUBLE_EQ(rp.rate_bps(), line);
}

TEST(DCQCN_ReactionPoint, FirstCnpCutsByHalfAlphaAtTheNextCheck)
{
    dcqcn_params p;
    dcqcn_rp rp(p, line);
    const time_ns t0 = 100 * us;
    const time_ns check = rp.on_cnp(t0);
    // Checks run at t0 + 1 ns + k x 4 us: the first one 4 us after the CNP.
    EXPECT_EQ(check, t0 + 1 + 4 * us);
    EXPECT_EQ(rp.on_cnp(t0 + 1 * us), no_time) << "one check pending at a time";
    ASSERT_TRUE(rp.on_decrease_check(check));
    // alpha = 1 at the first CNP, then four 1-us ticks: the second CNP (at
    // +1 us) is seen by tick 2, so alpha = (1-g) ((1-g) + g) ... exactly:
    const double g = p.g;
    double alpha = 1.0;
    alpha = (1 - g) * alpha;     // tick 1: no CNP since the first
    alpha = (1 - g) * alpha + g; // tick 2: the CNP at +1 us
    alpha = (1 - g) * alpha;     // tick 3
    alpha = (1 - g) * alpha;     // tick 4
    EXPECT_NEAR(rp.rate_bps(), line * (1 - alpha / 2), 1.0);
    EXPECT_DOUBLE_EQ(rp.target_bps(), line) << "stage 0 does not clamp the target (CLAMP_TARGET_RATE 0)";
    EXPECT_EQ(rp.rp_timer_due(), check + p.rp_timer_ns);
    EXPECT_EQ(rp.decreases(), 1u);
}

TEST(DCQCN_ReactionPoint, IncreaseStagesFastRecoveryThenAdditiveThenHyper)
{
    dcqcn_params p; // F = 1, AI 40 Mb/s, HAI 100 Mb/s, timer 300 us
    dcqcn_rp rp(p, line);
    const time_ns check = rp.on_cnp(0);
    ASSERT_TRUE(rp.on_decrease_check(check));
    // Cut again in stage 0... then let the timer run.
    const double cut = rp.rate_bps();
    time_ns t = rp.rp_timer_due();
    rp.on_rp_timer(t); // stage 0 < F: fast recovery, halfway to the target (line)
    EXPECT_NEAR(rp.rate_bps(), (cut + line) / 2, 1.0);
    EXPECT_DOUBLE_EQ(rp.target_bps(), line);
    // A second CNP in stage 1 clamps the target to the current rate.
    const double before = rp.rate_bps();
    const time_ns c2 = rp.on_cnp(t + 10 * us);
    ASSERT_TRUE(rp.on_decrease_check(c2));
    EXPECT_DOUBLE_EQ(rp.target_bps(), before);
    const double r0 = rp.rate_bps();
    t = rp.rp_timer_due();
    rp.on_rp_timer(t); // stage 0: fast recovery
    const double r1 = (r0 + before) / 2;
    EXPECT_NEAR(rp.rate_bps(), r1, 1.0);
    t = rp.rp_timer_due();
    rp.on_rp_timer(t); // stage 1 == F: additive
    EXPECT_NEAR(rp.target_bps(), before + p.rate_ai_bps, 1.0);
    EXPECT_NEAR(rp.rate_bps(), (r1 + before + p.rate_ai_bps) / 2, 1.0);
    const double r2 = rp.rate_bps();
    t = rp.rp_timer_due();
    rp.on_rp_timer(t); // stage 2 > F: hyper
    EXPECT_NEAR(rp.target_bps(), before + p.rate_ai_bps + p.rate_hai_bps, 1.0);
    EXPECT_NEAR(rp.rate_bps(), (r2 + rp.target_bps()) / 2, 1.0);
}

TEST(DCQCN_ReactionPoint, RateNeverBelowTheMinimum)
{
    dcqcn_params p;
    dcqcn_rp rp(p, line);
    time_ns t = 0;
    for (int i = 0; i < 2000; ++i) {
        const time_ns c = rp.on_cnp(t);
        ASSERT_NE(c, no_time);
        rp.on_decrease_check(c);
        t = c + 1;
    }
    EXPECT_DOUBLE_EQ(rp.rate_bps(), p.min_rate_bps);
}

TEST(DCQCN_ReactionPoint, AlphaDecaysWithoutCnps)
{
    dcqcn_params p;
    dcqcn_rp rp(p, line);
    rp.on_cnp(0);
    // 1000 ticks of 1 us without a CNP: alpha = (1-g)^1000.
    EXPECT_NEAR(rp.alpha(1000 * us), std::pow(1 - p.g, 1000), 1e-12);
}

TEST(DCQCN_ReactionPoint, ByteCounterRaisesTheRateWhenEnabled)
{
    dcqcn_params p;
    p.byte_counter_bytes = 10'000'000; // DCQCN paper: B = 10 MB
    dcqcn_rp rp(p, line);
    ASSERT_TRUE(rp.on_decrease_check(rp.on_cnp(0)));
    const double cut = rp.rate_bps();
    rp.on_bytes_sent(9'999'999);
    EXPECT_DOUBLE_EQ(rp.rate_bps(), cut);
    rp.on_bytes_sent(1);
    EXPECT_NEAR(rp.rate_bps(), (cut + line) / 2, 1.0) << "B bytes: one fast-recovery step";
}

TEST(DCTCP_Artefact, CutsOncePerWindowOnEcnAndAddsPerRound)
{
    dctcp_params p;
    dctcp_cc cc(p, line);
    // First ACK opens the first round; alpha starts at 1.
    auto r = cc.on_ack(1, 10, false);
    EXPECT_FALSE(r.new_round);
    EXPECT_DOUBLE_EQ(cc.rate_bps(), line);
    r = cc.on_ack(2, 11, true); // ECN: cut by alpha/2 = 1/2, enter CWR until PSN 11
    EXPECT_TRUE(r.cut);
    EXPECT_DOUBLE_EQ(cc.rate_bps(), line / 2);
    r = cc.on_ack(3, 12, true); // still in CWR: no second cut
    EXPECT_FALSE(r.cut);
    EXPECT_DOUBLE_EQ(cc.rate_bps(), line / 2);
    r = cc.on_ack(11, 20, false); // the round (up to PSN 10) is complete: 2 ECN of 11 ACKs... fraction
    EXPECT_TRUE(r.new_round);
    EXPECT_NEAR(r.fraction, 2.0 / 11.0, 1e-12);
    EXPECT_NEAR(cc.alpha(), (1 - p.g) * 1.0 + p.g * 2.0 / 11.0, 1e-12);
    r = cc.on_ack(12, 21, false); // CWR over (12 > 11): additive increase comes with the next round
    r = cc.on_ack(21, 30, false);
    EXPECT_TRUE(r.new_round);
    EXPECT_DOUBLE_EQ(cc.rate_bps(), line / 2 + p.rate_ai_bps);
}
