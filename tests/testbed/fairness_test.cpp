// The fairness figures of the summary, and the fair rate control
// (congestion.cc: fair, docs/congestion.md) on the fairness scenario set.
#include "helpers.hpp"

#include "fabric/fairness.hpp"
#include "fabric/schemes/registry.hpp"
#include "wire/layout.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <sstream>
#include <vector>

using namespace laps;
using namespace laps::test;

namespace {

struct parking_lot_run {
    fabric::run_summary summary;
    double jain_from_flows = 0;
    common::time_ns ideal_sum = 0;
    common::time_ns expected_bound = 0;
    common::time_ns last_end = 0;
};

// A receiver's bound as docs/testbed.md "Outputs" defines it, from the flows
// into it: their bytes (`bytes_of`) over the sum of its ports' rates, after
// the least latency among them (a flow's ideal FCT, `ideal_of`, less its
// bytes' serialisation at its source's rate).
template <typename Bytes, typename Ideal>
common::time_ns receiver_bound(const fabric::simulation& sim, topology::node_id dst, Bytes bytes_of, Ideal ideal_of)
{
    double bits = 0;
    double least_latency_ns = 1e18;
    for (const auto& f : sim.flows()) {
        if (f.spec.dst != dst) {
            continue;
        }
        const auto bytes = static_cast<double>(bytes_of(f));
        bits += 8.0 * bytes;
        const double serialisation_ns = 8.0 * bytes / (sim.hosts()[f.spec.src].rate_bps / 1e9);
        least_latency_ns = std::min(least_latency_ns, static_cast<double>(ideal_of(f)) - serialisation_ns);
    }
    double gbps = 0;
    for (const auto& a : sim.topology().neighbours(dst)) {
        gbps += sim.topology().link_at(a.link).rate_gbps;
    }
    return static_cast<common::time_ns>(bits / gbps + least_latency_ns);
}

parking_lot_run run_parking_lot(const char* cc)
{
    auto s = fabric::load_scenario(std::string(LAPS_SOURCE_ROOT) + "/configs/scenarios/fairness_parking_lot.yaml");
    s.fabric.pfc = true;
    s.algo.congestion.aimd.variant = *common::find_named(congestion::cc_variant_names, cc);
    fabric::simulation sim(s);
    sim.run();
    parking_lot_run r;
    r.summary = fabric::summarize(sim);
    std::vector<double> normalised;
    for (const auto& f : sim.flows()) {
        if (f.complete()) {
            normalised.push_back(static_cast<double>(f.ideal_ns) / static_cast<double>(f.fct()));
            r.last_end = std::max(r.last_end, f.end);
        }
        r.ideal_sum += f.ideal_ns;
    }
    r.expected_bound = receiver_bound(
        sim, *sim.topology().find("r"), [](const fabric::flow& f) { return f.wire_bytes; },
        [](const fabric::flow& f) { return f.ideal_ns; });
    r.jain_from_flows = fabric::jain_index(normalised);
    expect_no_leak(sim);
    const auto& f = r.summary.traffic.at(0).fairness;
    std::printf("%s: Jain %.4f, %.1f us = %.3f x bound, slowest %s\n", cc, f.jain, static_cast<double>(f.completion_ns) / 1e3,
                f.bound_ratio, f.slowest.c_str());
    return r;
}

} // namespace

TEST(Fairness, JainIndexIsOneForEqualSharesAndOneOverNForOneTakesAll)
{
    const std::array<double, 4> equal{2, 2, 2, 2};
    const std::array<double, 4> one{5, 0, 0, 0};
    const std::array<double, 2> two_to_one{2, 1};
    EXPECT_DOUBLE_EQ(fabric::jain_index(equal), 1.0);
    EXPECT_DOUBLE_EQ(fabric::jain_index(one), 0.25);
    EXPECT_DOUBLE_EQ(fabric::jain_index(two_to_one), 9.0 / 10.0);
    EXPECT_EQ(fabric::jain_index({}), 0.0);
}

// The summary's figures from the flows: Jain over ideal / FCT, the bound as
// the flows' bytes over r's one port after the shortest flow's latency
// (below the sum of their ideal FCTs, which counts a latency per flow),
// groups by number of paths (the
// parking lot's senders have 1, 2 and 8). Lossless, both variants share the
// bottleneck nearly equally (measured: Jain 0.997 paper, 0.998 fair).
TEST(Fairness, ParkingLotSummaryAndNearEqualSharesUnderBothVariants)
{
    for (const char* cc : {"paper", "fair"}) {
        const auto r = run_parking_lot(cc);
        ASSERT_EQ(r.summary.bytes_delivered, r.summary.bytes_offered) << cc;
        const auto& t = r.summary.traffic.at(0);
        const auto& f = t.fairness;
        EXPECT_EQ(t.flows, 3u);
        EXPECT_EQ(t.completed, 3u);
        EXPECT_DOUBLE_EQ(f.jain, r.jain_from_flows);
        EXPECT_NEAR(static_cast<double>(f.bound_ns), static_cast<double>(r.expected_bound), 2.0) << cc;
        EXPECT_LT(f.bound_ns, r.ideal_sum) << cc; // r has one port: each flow's latency counted once there
        EXPECT_EQ(f.completion_ns, r.last_end);
        EXPECT_DOUBLE_EQ(f.bound_ratio, static_cast<double>(r.last_end) / static_cast<double>(f.bound_ns));
        ASSERT_EQ(f.by_paths.size(), 3u);
        EXPECT_EQ(f.by_paths[0].paths, 1u);
        EXPECT_EQ(f.by_paths[1].paths, 2u);
        EXPECT_EQ(f.by_paths[2].paths, 8u);
        for (const auto& g : f.by_paths) {
            EXPECT_EQ(g.flows, 1u);
            EXPECT_LE(g.max_fct_us, t.fct_us.max);
        }
        EXPECT_GT(f.jain, 0.99) << cc;
        EXPECT_LT(f.bound_ratio, 1.6) << cc;
    }
}

// docs/congestion.md "Timeouts under PFC": a pause holds a path's packets far longer than
// 2 x realVal, and each early path timeout resends the path's whole window.
// On a lossless fabric the testbed floors LAPS's path timeout at the RoCE
// NICs' RTO (roce.irn_rto_high_us) unless the scenario sets
// retransmit.min_timeout_us. Measured on this in-cast (Rail AllReduce, 63 x
// 335 KB, PFC): floor 0 spurious resends, 1.38 x the bound; 10 us, 5,668
// spurious resends, 2.06 x.
TEST(Fairness, LosslessFabricFloorsThePathTimeoutAndStopsSpuriousResends)
{
    auto s = fabric::load_scenario(std::string(LAPS_SOURCE_ROOT) + "/configs/scenarios/rail_llm_allreduce.yaml");
    s.scale = 0.005;
    s.fabric.pfc = true;
    ASSERT_FALSE(s.min_timeout_given);
    const auto root = *s.topology->find("gpu0_0");

    fabric::simulation floored(s);
    EXPECT_EQ(floored.engine(root).config().algo.retransmit.min_timeout_ns, s.roce.irn_rto_high_ns);
    floored.run();
    const auto with_floor = fabric::summarize(floored);
    expect_no_leak(floored);

    auto short_timeout = s;
    short_timeout.algo.retransmit.min_timeout_ns = 10'000;
    short_timeout.min_timeout_given = true; // as `retransmit: {min_timeout_us: 10}` in the file
    fabric::simulation unfloored(short_timeout);
    EXPECT_EQ(unfloored.engine(root).config().algo.retransmit.min_timeout_ns, 10'000);
    unfloored.run();
    const auto without_floor = fabric::summarize(unfloored);
    expect_no_leak(unfloored);

    for (const auto* r : {&with_floor, &without_floor}) {
        ASSERT_EQ(r->bytes_delivered, r->bytes_offered);
        EXPECT_EQ(r->data_dropped, 0u); // lossless: every resend is spurious
    }
    // The summary says which floor ran.
    EXPECT_EQ(with_floor.run.timeout_floor_ns, s.roce.irn_rto_high_ns);
    EXPECT_EQ(without_floor.run.timeout_floor_ns, 10'000);
    std::ostringstream printed;
    fabric::print_summary(printed, with_floor);
    EXPECT_NE(printed.str().find(", cc paper, path timeout >= 1350 us)"), std::string::npos) << printed.str();
    EXPECT_EQ(with_floor.spurious, 0u);
    EXPECT_GT(without_floor.spurious, 1000u);
    EXPECT_LT(with_floor.traffic.at(0).fairness.bound_ratio, without_floor.traffic.at(0).fairness.bound_ratio);

    // DropTail keeps the paper's floor (10 us): losses are real there.
    s.fabric.pfc = false;
    fabric::simulation lossy(s);
    EXPECT_EQ(lossy.engine(root).config().algo.retransmit.min_timeout_ns, 10'000);
    expect_no_leak(lossy);
}

namespace {

struct root_ports {
    double rail_share = 0; // of the DATA bytes into the root, through its rail port
    double few_over_many = 0;
    double bound_ratio = 0;
};

root_ports run_rail_incast(bool coupled)
{
    auto s = fabric::load_scenario(std::string(LAPS_SOURCE_ROOT) + "/configs/scenarios/rail_llm_allreduce.yaml");
    s.scale = 0.02;
    s.algo.congestion.aimd.variant = congestion::cc_variant::fair;
    s.algo.congestion.aimd.fair.coupled_paths = coupled;
    fabric::simulation sim(s);
    sim.run();
    const auto summary = fabric::summarize(sim);
    EXPECT_EQ(summary.bytes_delivered, summary.bytes_offered);
    expect_no_leak(sim);
    const auto& topo = sim.topology();
    const auto root = *topo.find("gpu0_0");
    double rail = 0;
    double all = 0;
    for (const auto& p : sim.ports()) {
        if (p.to == root) {
            all += static_cast<double>(p.counters.data_bytes);
            rail += topo.name(p.from) == "rail0" ? static_cast<double>(p.counters.data_bytes) : 0.0;
        }
    }
    const auto& f = summary.traffic.at(0).fairness;
    root_ports r;
    r.rail_share = rail / all;
    r.few_over_many = f.by_paths.front().mean_fct_us / f.by_paths.back().mean_fct_us;
    r.bound_ratio = f.bound_ratio;
    std::printf("coupled %d: rail port %.3f of the root's DATA, few:many %.2f, %.3f x bound\n", coupled, r.rail_share,
                r.few_over_many, r.bound_ratio);
    return r;
}

} // namespace

// docs/congestion.md "Coupled paths": on Rail, 7 of the 8 paths of
// every remote flow end at the root's NVLink port, beside the root's seven
// one-path neighbours. With one rate per flow, Eq. 1 leaves most of the
// remote traffic there; with a rate per path and the coupled increase the
// remote flows move to the root's rail port, and the neighbours finish
// closer to the others. Measured at this scale (DropTail): the rail port
// 0.41 -> 0.45 of the root's DATA bytes, few:many 1.62 -> 1.25, the last
// flow 1.33 -> 1.23 x the bound.
TEST(Fairness, CoupledPathsMoveRemoteFlowsToTheRootsRailPort)
{
    const auto per_flow = run_rail_incast(false);
    const auto per_path = run_rail_incast(true);
    EXPECT_GT(per_path.rail_share, per_flow.rail_share + 0.03);
    EXPECT_LT(per_path.few_over_many, per_flow.few_over_many);
    EXPECT_LT(per_path.bound_ratio, per_flow.bound_ratio);
}

// results.hpp "Ideal FCT": the wire bound counts the bytes a flow's first
// transmissions took on the wire as its transport sent them, resends left
// out. On the Rail in-cast with a one-packet margin per link (DropTail:
// thousands of resends), a LAPS DATA adds 70 + 4 x anchors bytes to its host
// frame, a RoCE DATA 16 (58 bytes of headers against the frame's 42).
TEST(Fairness, WireBoundCountsFirstTransmissionsAsTheTransportSentThem)
{
    for (const char* scheme : {"laps", "ecmp"}) {
        auto s = fabric::load_scenario(std::string(LAPS_SOURCE_ROOT) +
                                       "/configs/scenarios/fairness_rail_allreduce_margin_link.yaml");
        s.scheme = fabric::schemes::find(scheme);
        ASSERT_NE(s.scheme, nullptr);
        fabric::simulation sim(s);
        sim.run();
        const auto summary = fabric::summarize(sim);
        ASSERT_EQ(summary.bytes_delivered, summary.bytes_offered) << scheme;
        EXPECT_GT(summary.retransmissions, 100u) << scheme;
        std::map<topology::node_id, common::time_ns> wire_into;
        common::time_ns wire_fct_sum = 0;
        for (const auto& f : sim.flows()) {
            ASSERT_TRUE(f.complete());
            const std::uint64_t frames = f.frames;
            if (sim.roce()) {
                EXPECT_EQ(f.first_wire_bytes, f.wire_bytes + 16 * frames) << f.id;
            } else {
                EXPECT_GE(f.first_wire_bytes, f.wire_bytes + 70 * frames) << f.id;
                EXPECT_LE(f.first_wire_bytes, f.wire_bytes + (70 + 4 * wire::max_anchors) * frames) << f.id;
            }
            const common::time_ns wire = sim.ideal_wire_fct(f);
            EXPECT_GT(wire, f.ideal_ns) << f.id;
            // At the host's rate, the extra bytes cost their serialisation,
            // plus the last packet's extra bytes at each later hop.
            const double extra_ns = static_cast<double>(f.first_wire_bytes - f.wire_bytes) * 8.0 /
                                    (sim.hosts()[f.spec.src].rate_bps / 1e9);
            EXPECT_GE(static_cast<double>(wire - f.ideal_ns), extra_ns - 2.0) << f.id;
            EXPECT_LE(static_cast<double>(wire - f.ideal_ns), extra_ns + 100.0) << f.id;
            wire_into[f.spec.dst] += wire;
            wire_fct_sum += wire;
        }
        const auto& fair = summary.traffic.at(0).fairness;
        const auto root = *sim.topology().find("gpu0_0");
        ASSERT_EQ(wire_into.size(), 1u);
        const auto expected = receiver_bound(
            sim, root, [](const fabric::flow& f) { return f.first_wire_bytes; },
            [&sim](const fabric::flow& f) { return sim.ideal_wire_fct(f); });
        EXPECT_NEAR(static_cast<double>(fair.wire_bound_ns), static_cast<double>(expected), 2.0) << scheme;
        // The root's two ports take every byte; each flow's latency is not
        // counted again, as a sum of ideal FCTs would.
        EXPECT_LT(fair.wire_bound_ns, wire_fct_sum / 2) << scheme;
        EXPECT_GT(fair.wire_bound_ns, fair.bound_ns) << scheme;
        EXPECT_DOUBLE_EQ(fair.wire_bound_ratio,
                         static_cast<double>(fair.completion_ns) / static_cast<double>(fair.wire_bound_ns));
        expect_no_leak(sim);
    }
}

// docs/congestion.md "Receiver-paced credits": on the Rail in-cast under PFC
// (63 senders, 1.3 MiB each at scale 0.02) the root's two ports pace their
// credits to the flows granted least, so every flow ends at the wire bound,
// the root's one-path neighbours with the others. Measured: 1.018 x the wire
// bound, Jain 1.000, one-path : eight-path average FCT 1.008; `fair` 1.455,
// 0.881, 0.44.
TEST(Fairness, ReceiverPacedCreditsEndTheRailInCastAtItsWireBound)
{
    auto s = fabric::load_scenario(std::string(LAPS_SOURCE_ROOT) + "/configs/scenarios/rail_llm_allreduce.yaml");
    s.scale = 0.02;
    s.fabric.pfc = true;
    s.algo.congestion.aimd.variant = congestion::cc_variant::credit;
    fabric::simulation sim(s);
    sim.run();
    const auto summary = fabric::summarize(sim);
    ASSERT_EQ(summary.bytes_delivered, summary.bytes_offered);
    const auto& f = summary.traffic.at(0).fairness;
    std::printf("credit: %.3f x the wire bound, Jain %.4f, %lu probes for %lu DATA\n", f.wire_bound_ratio, f.jain,
                static_cast<unsigned long>(summary.engines.probe_sent), static_cast<unsigned long>(summary.engines.data_sent));
    EXPECT_LT(f.wire_bound_ratio, 1.05);
    EXPECT_GT(f.jain, 0.98);
    ASSERT_EQ(f.by_paths.size(), 2u);
    EXPECT_LT(f.by_paths.front().mean_fct_us / f.by_paths.back().mean_fct_us, 1.10);
    EXPECT_GT(summary.engines.credit_taken, 80'000u); // 91,665 for 86,121 DATA (window grants included)
    EXPECT_EQ(summary.engines.credit_drop_beyond_request, 0u);
    // A DATA a credit calls goes on the path the credit names, with no draw
    // and no probe (item 5): 455 probes, against 6,720 when each such DATA
    // also probed a stale path by Alg. 1.
    EXPECT_LT(summary.engines.probe_sent, 1'500u);
    expect_no_leak(sim);
}
