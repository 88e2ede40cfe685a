// §III-D/§III-G, Alg. 1 and 3: a path fails mid-flow (its last link goes
// down at 300 us of a 10 MB flow on tests/testbed/two_paths_1to2.yaml; the
// fabric does not reroute, as with static source routes).
//   - Its packets time out (2 x realVal, at least 10 us), are resent, and
//     stale-path probing doubles its realVal until Eq. 1 gives it ~0 weight:
//     within 20 us (10 us timeout floor + two probe rounds, ~4 RTTs of the
//     2.6 us path) it carries under 1% of new packets, after 100 us none.
//   - Every packet the fabric dropped on the dead link is resent; the flow
//     completes with every byte delivered exactly once.
#include "helpers.hpp"

using namespace laps;
using namespace laps::test;

namespace {
constexpr fabric::time_ns us = 1000;
constexpr fabric::time_ns fail_at = 300 * us;
} // namespace

TEST(III_G_PathFailure, FailedPathStopsCarryingPacketsAndItsPacketsAreResent)
{
    const auto s = scenario_from("version: 1\n"
                                 "topology: tests/testbed/two_paths_1to2.yaml\n"
                                 "traffic:\n"
                                 "  - flows: [{src: a, dst: b, bytes: 10000000}]\n"
                                 "faults:\n"
                                 "  - {at_us: 300, link: [s_short, b], action: down}\n");
    fabric::simulation sim(s);
    const auto both = [&] {
        const auto p = packets_per_path(sim, 0);
        return std::pair{p[0], p[1]};
    };
    sim.run_until(fail_at);
    const auto at_fail = both();
    sim.run_until(fail_at + 20 * us);
    const auto early = both();
    sim.run_until(fail_at + 100 * us);
    const auto late = both();
    sim.run();
    const auto end = both();

    std::printf("short path packets: %llu at the failure, %llu at +20 us, %llu at +100 us, %llu at the end\n",
                static_cast<unsigned long long>(at_fail.first), static_cast<unsigned long long>(early.first),
                static_cast<unsigned long long>(late.first), static_cast<unsigned long long>(end.first));
    ASSERT_GT(at_fail.first, 1000u) << "the short path carried traffic before the failure";
    const std::uint64_t after_short = end.first - early.first;
    const std::uint64_t after_all = after_short + (end.second - early.second);
    EXPECT_LT(share(after_short, after_all), 0.01) << "after +20 us the failed path gets under 1% of packets";
    EXPECT_EQ(end.first, late.first) << "after +100 us the failed path gets nothing";

    // Everything lost on the dead link came back.
    ASSERT_TRUE(sim.done());
    EXPECT_EQ(sim.completed_flows(), 1u);
    EXPECT_EQ(sim.bytes_delivered(), sim.bytes_offered());
    const auto summary = fabric::summarize(sim);
    const auto lost_data = summary.drops[0][static_cast<std::size_t>(fabric::drop_reason::link_down)];
    EXPECT_GT(lost_data, 0u);
    EXPECT_EQ(summary.data_dropped, lost_data) << "link_down is the only cause of loss here";
    EXPECT_GE(summary.retransmissions, lost_data) << "every DATA lost on the dead link is resent";
    EXPECT_GT(summary.engines.loss_by_timeout, 0u);
    EXPECT_EQ(summary.host_duplicates, 0u);
    expect_no_leak(sim);
}

// The same failure under the fair variant's coupled paths (docs/congestion.md
// "Coupled paths"): the dead path answers no ACK that could cut its rate,
// and its timeout fires only when nothing is sent on it. Its timeouts halve
// its rate, and Alg. 1's doubling of its realVal takes it out of the draw
// (coupled_rates::latency_factor) as it takes it out of Eq. 1.
TEST(III_G_PathFailure, CoupledPathsAlsoStopUsingAFailedPath)
{
    auto s = scenario_from("version: 1\n"
                           "topology: tests/testbed/two_paths_1to2.yaml\n"
                           "traffic:\n"
                           "  - flows: [{src: a, dst: b, bytes: 10000000}]\n"
                           "faults:\n"
                           "  - {at_us: 300, link: [s_short, b], action: down}\n"
                           "congestion: {cc: fair, fair: {coupled_paths: true}}\n");
    fabric::simulation sim(s);
    sim.run_until(fail_at);
    const auto at_fail = packets_per_path(sim, 0);
    sim.run_until(fail_at + 200 * us);
    const auto settled = packets_per_path(sim, 0);
    sim.run();
    const auto end = packets_per_path(sim, 0);
    const std::uint64_t after_short = end[0] - settled[0];
    const std::uint64_t after_all = after_short + (end[1] - settled[1]);
    std::printf("coupled: short path %llu packets before the failure, %llu in its first 200 us, then %llu of %llu\n",
                static_cast<unsigned long long>(at_fail[0]), static_cast<unsigned long long>(settled[0] - at_fail[0]),
                static_cast<unsigned long long>(after_short), static_cast<unsigned long long>(after_all));
    ASSERT_GT(at_fail[0], 1000u) << "the short path carried traffic before the failure";
    EXPECT_LT(share(after_short, after_all), 0.01) << "after +200 us the failed path gets under 1% of packets";
    ASSERT_TRUE(sim.done());
    EXPECT_EQ(sim.bytes_delivered(), sim.bytes_offered());
    expect_no_leak(sim);
}
