// The paper's baselines (§IV: ECMP, LetFlow, CONGA, ConWeave on RoCEv2 +
// DCQCN, PLB on DCTCP) as the testbed models them (fabric/hosts/roce_nic.hpp,
// fabric/schemes/): one test per defining behaviour, each on a small
// fabric, each asserting counters the behaviour fixes.
#include "helpers.hpp"

using namespace laps;
using namespace laps::test;

namespace {

struct run_result {
    fabric::run_summary summary;
    fabric::hosts::roce_qp qp; // flow 0's sender state at the end
};

run_result run(const std::string& yaml)
{
    fabric::simulation sim(scenario_from(yaml));
    sim.run();
    run_result r;
    r.summary = fabric::summarize(sim);
    r.qp = sim.roce_hosts()->qp(0);
    EXPECT_TRUE(sim.done());
    EXPECT_EQ(r.summary.completed, r.summary.flows);
    EXPECT_EQ(r.summary.bytes_delivered, r.summary.bytes_offered);
    EXPECT_EQ(r.summary.host_duplicates, 0u);
    expect_no_leak(sim);
    return r;
}

// One 2 MB flow over two disjoint paths; the source's link to the short path
// discards what it finishes sending during 80 ns at 30 us: one DATA packet.
std::string one_loss(const std::string& recovery)
{
    return "version: 1\n"
           "topology: tests/testbed/two_paths_1to2.yaml\n"
           "scheme: ecmp\n"
           "roce: {recovery: " +
           recovery +
           "}\n"
           "traffic:\n"
           "  - flows: [{src: a, dst: b, bytes: 2000000}]\n"
           "faults:\n"
           "  - {at_us: 30, link: [a, s_short], action: blackhole}\n"
           "  - {at_us: 30.08, link: [a, s_short], action: restore}\n"
           "  - {at_us: 30, link: [a, s_long], action: blackhole}\n"
           "  - {at_us: 30.08, link: [a, s_long], action: restore}\n";
}

} // namespace

// RoCEv2 Go-Back-N: the receiver drops what follows a gap and NACKs the gap;
// the sender resends from the lost PSN, everything it had sent after it too.
// IRN's selective repeat resends the lost packet alone.
TEST(IV_A_RoCEv2, GoBackNResendsFromTheGapIrnOnlyTheLostPacket)
{
    const auto gbn = run(one_loss("gbn"));
    const auto irn = run(one_loss("irn"));
    const auto lost = [](const fabric::run_summary& s) {
        return s.drops[static_cast<std::size_t>(fabric::packet_class::data)]
                      [static_cast<std::size_t>(fabric::drop_reason::blackhole)];
    };
    ASSERT_EQ(lost(gbn.summary), 1u) << "exactly one DATA packet lost";
    ASSERT_EQ(lost(irn.summary), 1u);
    std::printf("Go-Back-N: lost PSN %u, %llu resends, %llu dropped out of order at the receiver; IRN: %llu resends\n",
                gbn.qp.first_resend, static_cast<unsigned long long>(gbn.summary.roce_totals.data_resent),
                static_cast<unsigned long long>(gbn.summary.roce_totals.rx_out_of_order),
                static_cast<unsigned long long>(irn.summary.roce_totals.data_resent));
    // The same packet was lost in both runs (identical up to the loss).
    EXPECT_EQ(gbn.qp.first_resend, irn.qp.first_resend) << "both resend the lost PSN first";
    EXPECT_GT(gbn.qp.first_resend, 100u);
    // Go-Back-N: every packet sent after the gap until the NACK arrived comes again.
    EXPECT_GE(gbn.summary.roce_totals.go_back, 1u);
    EXPECT_GT(gbn.summary.roce_totals.data_resent, 10u);
    EXPECT_GE(gbn.summary.roce_totals.data_resent, gbn.summary.roce_totals.rx_out_of_order);
    // IRN: one resend, the packets after the gap were kept.
    EXPECT_EQ(irn.summary.roce_totals.data_resent, 1u);
    EXPECT_EQ(irn.summary.roce_totals.rx_duplicates, 0u);
}

// DCQCN (§IV-A: RoCEv2 + DCQCN for ECMP, LetFlow, CONGA, ConWeave): two
// senders into one receiver link; RED marks the queue, the receiver's
// notification point sends CNPs and the senders cut their rates. With ECN
// marking off the same in-cast sees no CNP and no cut.
TEST(IV_A_DCQCN, SendersCutTheirRateOnCnpsAndOnlyThen)
{
    const std::string base = "version: 1\n"
                             "topology: 'leaf_spine:leaves=2,spines=1,hosts_per_leaf=2'\n"
                             "scheme: ecmp\n"
                             "traffic:\n"
                             "  - flows: [{src: h0_0, dst: h1_0, bytes: 3000000}, {src: h0_1, dst: h1_0, bytes: 3000000}]\n";
    const auto marked = run(base + "fabric: {pfc: true}\n");
    const auto unmarked = run(base + "fabric: {pfc: true, ecn: off}\n");
    const auto& m = marked.summary.roce_totals;
    const auto& u = unmarked.summary.roce_totals;
    std::printf("ECN on: %llu CE echoes, %llu CNPs, %llu rate cuts, rate now %.1f Gb/s; ECN off: %llu CNPs, %llu cuts\n",
                static_cast<unsigned long long>(m.ecn_echoes), static_cast<unsigned long long>(m.cnps_sent),
                static_cast<unsigned long long>(m.rate_decreases), marked.qp.rate_bps() / 1e9,
                static_cast<unsigned long long>(u.cnps_sent), static_cast<unsigned long long>(u.rate_decreases));
    EXPECT_GT(m.ecn_echoes, 0u);
    EXPECT_GT(m.cnps_sent, 0u);
    EXPECT_GT(m.rate_decreases, 0u);
    EXPECT_LE(m.rate_decreases, m.cnps_sent) << "at most one cut per CNP";
    EXPECT_LT(marked.qp.rate_bps(), 100e9);
    EXPECT_EQ(u.ecn_echoes, 0u);
    EXPECT_EQ(u.cnps_sent, 0u);
    EXPECT_EQ(u.rate_decreases, 0u);
    EXPECT_DOUBLE_EQ(unmarked.qp.rate_bps(), 100e9) << "no CNP, no cut";
}

// LetFlow (§IV-A: flowlet timeout 50 us): a flow sending back to back never
// pauses 50 us, so it stays on its first path; with a timeout shorter than
// the gap between its packets, every packet starts a new flowlet and the
// flow moves between paths.
TEST(IV_A_LetFlow, SwitchesPathOnlyAfterAnIdleGap)
{
    const std::string base = "version: 1\n"
                             "topology: tests/testbed/two_paths_1to2.yaml\n"
                             "scheme: letflow\n"
                             "traffic:\n"
                             "  - flows: [{src: a, dst: b, bytes: 1000000}]\n";
    const std::string lossless = "fabric: {pfc: true}\n";
    const auto steady = run(base + lossless);
    const auto eager = run(base + lossless + "roce: {flowlet_timeout_us: 0.05}\n");
    const auto& s = steady.summary.roce_totals;
    const auto& e = eager.summary.roce_totals;
    std::printf("50 us: %llu flowlets, %llu path changes; 50 ns: %llu flowlets, %llu path changes\n",
                static_cast<unsigned long long>(steady.summary.scheme_counter("flowlets")), static_cast<unsigned long long>(steady.summary.scheme_counter("path_changes")),
                static_cast<unsigned long long>(eager.summary.scheme_counter("flowlets")), static_cast<unsigned long long>(eager.summary.scheme_counter("path_changes")));
    EXPECT_EQ(steady.summary.scheme_counter("flowlets"), 1u);
    EXPECT_EQ(steady.summary.scheme_counter("path_changes"), 0u);
    EXPECT_EQ(s.rx_out_of_order, 0u);
    EXPECT_EQ(eager.summary.scheme_counter("flowlets"), e.data_sent) << "every packet follows an 83 ns gap > 50 ns";
    EXPECT_GT(eager.summary.scheme_counter("path_changes"), e.data_sent / 4) << "random choice over two paths: about half the flowlets move";
    EXPECT_GT(e.rx_out_of_order, 0u) << "the paths differ by 2.6 us: moving reorders";
}

// PLB (§IV-B: "if a flow detects congestion for 12 consecutive times ... it
// will force the path switching"): two DCTCP flows into one receiver mark
// every round; each flow repaths after 12 congested rounds, never sooner.
TEST(IV_B_PLB, RepathsAfterNConsecutiveCongestedRounds)
{
    const std::string base = "version: 1\n"
                             "topology: 'leaf_spine:leaves=2,spines=4,hosts_per_leaf=2'\n"
                             "candidates: 'yen:k=4,stretch=1'\n"
                             "scheme: plb\n"
                             "fabric: {pfc: true, red_kmin_bytes: 1000, red_kmax_bytes: 2000}\n"
                             // Rates may not fall below 60 Gb/s: two flows keep the receiver's link congested.
                             "roce: {dctcp: {min_rate_mbps: 60000}";
    const std::string traffic =
        "traffic:\n"
        "  - flows: [{src: h0_0, dst: h1_0, bytes: 4000000}, {src: h0_1, dst: h1_0, bytes: 4000000}]\n";
    const auto forced = run(base + "}\n" + traffic);
    const auto never = run(base + ", plb: {forced_rounds: 100000, idle_rounds: 100000}}\n" + traffic);
    const auto& f = forced.summary;
    std::printf("%llu rounds, %llu congested, %llu repaths\n", static_cast<unsigned long long>(f.scheme_counter("plb_rounds")),
                static_cast<unsigned long long>(f.scheme_counter("plb_congested")), static_cast<unsigned long long>(f.scheme_counter("plb_repaths")));
    ASSERT_GT(f.scheme_counter("plb_congested"), 24u);
    EXPECT_GE(f.scheme_counter("plb_repaths"), 2u);
    EXPECT_LE(f.scheme_counter("plb_repaths") * 12, f.scheme_counter("plb_congested")) << "a repath needs 12 congested rounds in a row";
    EXPECT_EQ(f.scheme_counter("path_changes"), f.scheme_counter("plb_repaths")) << "each repath moves to another candidate";
    EXPECT_EQ(never.summary.scheme_counter("plb_repaths"), 0u);
}

// ConWeave (Song et al., SIGCOMM 2023; paper §IV-B): the source ToR moves a
// flow whose RTT reply comes late; packets of the new (faster) path that
// overtake the old path's TAIL wait at the destination ToR, so the receiver
// NIC sees every packet in order although the flow changed paths.
TEST(IV_B_ConWeave, DestinationTorDeliversInOrderAcrossReroutes)
{
    // Four flows into b over two paths; the short path's last link runs at
    // 40 Gb/s. A flow on a queued path gets its RTT replies late and moves;
    // the new path's packets overtake the old path's queued ones.
    const auto r = run("version: 1\n"
                       "topology: tests/testbed/conweave_3hosts.yaml\n"
                       "candidates: 'yen:k=2'\n"
                       "scheme: conweave\n"
                       "fabric: {pfc: true}\n"
                       "traffic:\n"
                       "  - flows: [{src: a, dst: b, bytes: 2000000}, {src: c, dst: b, bytes: 2000000},\n"
                       "            {src: a, dst: b, bytes: 2000000, start_us: 5},\n"
                       "            {src: c, dst: b, bytes: 2000000, start_us: 5}]\n");
    const auto& c = r.summary.roce_totals;
    std::printf("%llu reroutes, %llu packets held at the ToR (max %llu), flushed by TAIL %llu, by timer %llu; "
                "receiver saw %llu out of order\n",
                static_cast<unsigned long long>(r.summary.scheme_counter("cw_reroutes")), static_cast<unsigned long long>(r.summary.scheme_counter("cw_held")),
                static_cast<unsigned long long>(r.summary.scheme_counter("cw_held_max")), static_cast<unsigned long long>(r.summary.scheme_counter("cw_flush_by_tail")),
                static_cast<unsigned long long>(r.summary.scheme_counter("cw_flush_by_timer")),
                static_cast<unsigned long long>(c.rx_out_of_order));
    EXPECT_GT(r.summary.scheme_counter("cw_reroutes"), 0u);
    EXPECT_GT(r.summary.scheme_counter("cw_held"), 0u) << "new-path packets overtook the old path";
    EXPECT_GT(r.summary.scheme_counter("cw_flush_by_tail"), 0u);
    EXPECT_EQ(c.rx_out_of_order, 0u) << "the ToR reordered them";
    EXPECT_EQ(c.data_resent, 0u);
}

// CONGA (§IV-A, Alizadeh et al. §3): flowlets go to the least congested
// path by the leaf-to-leaf feedback. Two paths to b, the short one ending on a
// 40 Gb/s link; with a new flowlet at every packet, CONGA's DRE feedback moves
// most packets to the 100 Gb/s path while LetFlow's random choice splits them
// evenly. ECMP (§IV-A) keeps one path per flow.
TEST(IV_A_CONGA, FlowletsGoToTheLessCongestedPath)
{
    const auto share_of_fast_path = [](const std::string& scheme) {
        const auto s = scenario_from("version: 1\n"
                                     "topology: tests/testbed/conweave_3hosts.yaml\n"
                                     "candidates: 'yen:k=2'\n"
                                     "scheme: " +
                                     scheme +
                                     "\n"
                                     "fabric: {pfc: true}\n"
                                     "roce: {flowlet_timeout_us: 0.05}\n"
                                     "traffic:\n"
                                     "  - flows: [{src: a, dst: b, bytes: 2000000}]\n");
        fabric::simulation sim(s);
        sim.run();
        EXPECT_EQ(sim.bytes_delivered(), sim.bytes_offered());
        const auto counts = sim.packets_per_path(0); // pid 0 via s_short (40 Gb/s), pid 1 via s_long
        const std::vector<std::uint64_t> per_path(counts.begin(), counts.end());
        const double fast = share(per_path.at(1), per_path.at(0) + per_path.at(1));
        const auto summary = fabric::summarize(sim);
        std::printf("%s: %.1f%% of packets on the 100 Gb/s path, %llu CONGA feedback updates\n", scheme.c_str(),
                    100 * fast, static_cast<unsigned long long>(summary.scheme_counter("conga_feedback")));
        expect_no_leak(sim);
        return std::pair{fast, summary};
    };
    const auto [conga, conga_summary] = share_of_fast_path("conga");
    const auto [letflow, letflow_summary] = share_of_fast_path("letflow");
    const auto [ecmp, ecmp_summary] = share_of_fast_path("ecmp");
    EXPECT_GT(conga_summary.scheme_counter("conga_feedback"), 100u);
    EXPECT_GT(conga, 0.6);
    EXPECT_NEAR(letflow, 0.5, 0.05);
    EXPECT_TRUE(ecmp == 0.0 || ecmp == 1.0) << "ECMP: one path for the whole flow";
    EXPECT_EQ(ecmp_summary.scheme_counter("path_changes"), 0u);
}
