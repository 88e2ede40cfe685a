// Hopper (seed 002, §3, Table 1: th_prob 1.5, th_cong 2.5, ttl_prob 4 x base
// RTT): probing starts above th_prob, a switch happens above th_cong and only
// to a clearly better probed path, after the RTT difference.
#include "policy/hopper.hpp"

#include <gtest/gtest.h>

using namespace laps::policy;
using laps::common::time_ns;

namespace {

constexpr time_ns base = 10'000; // 10 us

hopper_config config()
{
    hopper_config c;
    c.base_ns = base;
    c.entropies = 16;
    return c;
}

// One epoch of samples at `rtt`, ending at `now` (returns the epoch's decision).
hopper_decision epoch(hopper& h, time_ns rtt, time_ns& now, laps::common::rng& random)
{
    hopper_decision d;
    const time_ns end = now + std::max(base, h.average_rtt());
    for (; now <= end; now += 1000) {
        const auto x = h.on_rtt(h.current(), rtt, now, random);
        if (x.probes > 0 || x.switched) {
            d = x;
        }
    }
    return d;
}

} // namespace

TEST(Hopper_Sec3, NoProbeBelowThProbAndTwoDistinctProbesAbove)
{
    laps::common::rng random(1);
    hopper h(config(), 3);
    time_ns now = 0;
    EXPECT_EQ(epoch(h, 14'000, now, random).probes, 0) << "1.4 x base: no probe";
    EXPECT_EQ(epoch(h, 14'000, now, random).probes, 0);
    const auto d = epoch(h, 16'000, now, random);
    ASSERT_EQ(d.probes, 2) << "1.6 x base: two probes";
    EXPECT_NE(d.probe[0], d.probe[1]);
    EXPECT_NE(d.probe[0], 3);
    EXPECT_NE(d.probe[1], 3);
    EXPECT_FALSE(d.switched) << "below th_cong nothing moves";
}

TEST(Hopper_Sec3, SwitchesAboveThCongOnlyToAClearlyBetterProbedPath)
{
    laps::common::rng random(2);
    hopper h(config(), 3);
    time_ns now = 0;
    auto d = epoch(h, 30'000, now, random); // 3 x base: probe (and congested, but nothing probed yet)
    ASSERT_EQ(d.probes, 2);
    EXPECT_FALSE(d.switched);
    // Both alternatives nearly as slow (> 0.8 x 30 us): stay.
    h.on_probe(d.probe[0], 28'000, now);
    h.on_probe(d.probe[1], 27'000, now);
    d = epoch(h, 30'000, now, random);
    EXPECT_FALSE(d.switched) << "no clearly better path";
    EXPECT_EQ(h.current(), 3);
    // A new round of probes; one answers at 12 us: switch to it, after the RTT difference.
    if (d.probes == 0) {
        d = epoch(h, 30'000, now, random);
    }
    ASSERT_EQ(d.probes, 2);
    const std::uint16_t good = d.probe[1];
    h.on_probe(d.probe[0], 29'000, now);
    h.on_probe(good, 12'000, now);
    d = epoch(h, 30'000, now, random);
    ASSERT_TRUE(d.switched);
    EXPECT_EQ(d.entropy, good);
    EXPECT_EQ(h.current(), good);
    EXPECT_EQ(d.delay_ns, 30'000 - 12'000);
    EXPECT_EQ(h.switches(), 1u);
}

TEST(Hopper_Sec3, NoSwitchBelowThCongEvenToABetterPath)
{
    laps::common::rng random(3);
    hopper h(config(), 3);
    time_ns now = 0;
    auto d = epoch(h, 20'000, now, random); // 2 x base: probing, not congested
    ASSERT_EQ(d.probes, 2);
    h.on_probe(d.probe[0], 10'000, now);
    h.on_probe(d.probe[1], 10'000, now);
    for (int i = 0; i < 3; ++i) {
        EXPECT_FALSE(epoch(h, 20'000, now, random).switched);
    }
    EXPECT_EQ(h.current(), 3);
}

TEST(Hopper_Sec3, SamplesOfTheOldPathAfterASwitchAreIgnored)
{
    laps::common::rng random(4);
    hopper h(config(), 3);
    EXPECT_EQ(h.on_rtt(7, 100'000, 0, random).probes, 0);
    EXPECT_EQ(h.average_rtt(), 0);
}

// A timeout (no sample will come from a failed path): the flow moves to the
// best path probed within ttl, else to a random usable one.
TEST(Hopper_Failures, ATimeoutMovesToTheBestProbedPathElseARandomOne)
{
    laps::common::rng random(7);
    hopper probed(config(), 3);
    time_ns now = 0;
    auto d = epoch(probed, 20'000, now, random); // 2 x base: probes, no switch
    ASSERT_EQ(d.probes, 2);
    const std::uint16_t faster = d.probe[1];
    probed.on_probe(d.probe[0], 15'000, now);
    probed.on_probe(faster, 11'000, now);
    d = probed.on_timeout(now, random);
    ASSERT_TRUE(d.switched);
    EXPECT_EQ(d.entropy, faster) << "the faster of the two probed paths";
    EXPECT_EQ(probed.current(), faster);
    EXPECT_EQ(probed.switches(), 1u);

    hopper blind(config(), 3);
    d = blind.on_timeout(0, random);
    ASSERT_TRUE(d.switched) << "nothing probed: a random other path";
    EXPECT_NE(blind.current(), 3);
}
