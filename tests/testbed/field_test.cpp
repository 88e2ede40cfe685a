// The other systems of the seeds (docs/testbed.md, Schemes) as the testbed models them
// (policy/, fabric/schemes/):
// one test per defining behaviour, on a small fabric, asserting the counters
// and path shares the behaviour fixes.
#include "helpers.hpp"

#include <numeric>

using namespace laps;
using namespace laps::test;

namespace {

struct outcome {
    fabric::run_summary summary;
    std::vector<std::vector<std::uint64_t>> per_path; // DATA per pid, per host
    std::vector<std::uint64_t> port_bytes;            // per port
    std::vector<std::string> port_name;               // "from->to"
};

outcome run(const std::string& yaml)
{
    fabric::simulation sim(scenario_from(yaml));
    sim.run();
    outcome o;
    o.summary = fabric::summarize(sim);
    EXPECT_TRUE(sim.done());
    EXPECT_EQ(o.summary.completed, o.summary.flows);
    EXPECT_EQ(o.summary.bytes_delivered, o.summary.bytes_offered);
    EXPECT_EQ(o.summary.host_duplicates, 0u);
    const auto& topo = sim.topology();
    for (topology::node_id h = 0; h < topo.host_count(); ++h) {
        const auto counts = sim.packets_per_path(h);
        o.per_path.emplace_back(counts.begin(), counts.end());
    }
    for (const auto& p : sim.ports()) {
        o.port_bytes.push_back(p.counters.bytes);
        o.port_name.push_back(topo.name(p.from) + "->" + topo.name(p.to));
    }
    expect_no_leak(sim);
    return o;
}

std::uint64_t port_bytes(const outcome& o, const std::string& name)
{
    for (std::size_t p = 0; p < o.port_name.size(); ++p) {
        if (o.port_name[p] == name) {
            return o.port_bytes[p];
        }
    }
    ADD_FAILURE() << "no port " << name;
    return 0;
}

std::size_t paths_used(const std::vector<std::uint64_t>& per_path)
{
    return static_cast<std::size_t>(std::count_if(per_path.begin(), per_path.end(), [](auto n) { return n > 0; }));
}

// A 2-leaf, 4-spine leaf-spine, 2 hosts per leaf, its 4 candidates per pair;
// `rest` follows (scheme, sections, traffic).
std::string leaf_spine_2x4(const std::string& rest)
{
    return "version: 1\n"
           "topology: 'leaf_spine:leaves=2,spines=4,hosts_per_leaf=2'\n"
           "candidates: 'yen:k=4,stretch=1'\n" +
           rest;
}

// conweave_3hosts: a -> b over s_short (its link to b at 40 Gb/s, pid 0) or s_long (100 Gb/s, pid 1).
double fast_share(const outcome& o)
{
    const auto& a = o.per_path.at(0);
    return share(a.at(1), a.at(0) + a.at(1));
}

std::string three_hosts(const std::string& scheme, const std::string& extra = "")
{
    return "version: 1\n"
           "topology: tests/testbed/conweave_3hosts.yaml\n"
           "candidates: 'yen:k=2'\n"
           "scheme: " +
           scheme + "\n" + extra +
           "traffic:\n"
           "  - flows: [{src: a, dst: b, bytes: 4000000}]\n";
}

} // namespace

// REPS (seed 001, §3): entropies whose ACKs come back unmarked are sent
// again, marked ones are not. One flow over a 40 Gb/s and a 100 Gb/s path,
// RED marking from 10 KB: REPS moves traffic to the fast path where
// oblivious spraying keeps half on each.
TEST(REPS_Sec3, RecyclesCleanEntropiesAndLeavesTheMarkedPath)
{
    const std::string red = "fabric: {pfc: true, red_kmin_bytes: 10000, red_kmax_bytes: 40000}\n";
    const auto reps = run(three_hosts("reps", red));
    const auto rps = run(three_hosts("rps", red));
    const auto& r = reps.summary.roce_totals;
    std::printf("fast-path share: REPS %.1f%%, RPS %.1f%%; REPS %llu recycled, %llu explored; FCT %.1f vs %.1f us\n",
                100 * fast_share(reps), 100 * fast_share(rps), static_cast<unsigned long long>(reps.summary.scheme_counter("reps_recycled")),
                static_cast<unsigned long long>(reps.summary.scheme_counter("reps_explored")), reps.summary.fct_us.max, rps.summary.fct_us.max);
    EXPECT_GT(reps.summary.scheme_counter("reps_recycled"), 10 * reps.summary.scheme_counter("reps_explored")) << "after the first BDP packets reuse clean entropies";
    EXPECT_GT(r.ecn_echoes, 0u) << "the slow path's queue was marked";
    EXPECT_NEAR(fast_share(rps), 0.5, 0.05);
    EXPECT_GT(fast_share(reps), fast_share(rps) + 0.15);
    EXPECT_EQ(reps.summary.roce_totals.data_resent, 0u) << "reordering within the tolerance is not a loss";
}

// REPS under a failure (seed 001, §4.3): a spine's link to the receiver's
// leaf drops everything from 50 us on. A timeout freezes exploration and
// REPS keeps to entropies whose ACKs come back; oblivious spraying keeps
// sending a quarter into the hole, and so does REPS without the freeze.
TEST(REPS_Sec4_3, AFailedLinkIsLeftAfterTheFirstTimeout)
{
    const auto yaml = [](const std::string& scheme, const std::string& extra) {
        return leaf_spine_2x4("scheme: " + scheme + "\n" + extra +
                              "traffic:\n"
                              "  - flows: [{src: h0_0, dst: h1_0, bytes: 4000000}]\n"
                              "faults:\n"
                              "  - {at_us: 50, link: [spine0, leaf1], action: blackhole}\n");
    };
    const auto reps = run(yaml("reps", ""));
    const auto unfrozen = run(yaml("reps", "roce: {reps: {freeze_us: 0}}\n"));
    const auto rps = run(yaml("rps", ""));
    const auto lost = [](const outcome& o) {
        return o.summary.drops[static_cast<std::size_t>(fabric::packet_class::data)]
                              [static_cast<std::size_t>(fabric::drop_reason::blackhole)];
    };
    std::printf("DATA lost / FCT: REPS %llu / %.1f us (%llu freezes), without freeze %llu / %.1f us, RPS %llu / %.1f us\n",
                static_cast<unsigned long long>(lost(reps)), reps.summary.fct_us.max,
                static_cast<unsigned long long>(reps.summary.scheme_counter("reps_freezes")),
                static_cast<unsigned long long>(lost(unfrozen)), unfrozen.summary.fct_us.max,
                static_cast<unsigned long long>(lost(rps)), rps.summary.fct_us.max);
    EXPECT_GE(reps.summary.scheme_counter("reps_freezes"), 1u);
    EXPECT_LT(lost(reps) * 10, lost(rps));
    EXPECT_LT(lost(reps) * 10, lost(unfrozen));
    EXPECT_LT(reps.summary.fct_us.max * 10, rps.summary.fct_us.max);
}

// Hopper (seed 002, §3, Table 1): probes start above 1.5 x base RTT and a
// flow moves only above 2.5 x, to a path its probes found clearly better.
TEST(Hopper_Sec3, ProbesAboveThProbSwitchesAboveThCongToTheBetterPath)
{
    // The flow starts on the 40 Gb/s path (its QP's entropy hashes there) at 100 Gb/s.
    const auto hopper = run(three_hosts("hopper", "fabric: {pfc: true}\n"));
    const auto never_congested = run(three_hosts("hopper", "fabric: {pfc: true}\nroce: {hopper: {congestion_threshold: 1000, probe_threshold: 1000}}\n"));
    const auto probe_only = run(three_hosts("hopper", "fabric: {pfc: true}\nroce: {hopper: {congestion_threshold: 1000}}\n"));
    const auto& h = hopper.summary;
    std::printf("default: %llu probes, %llu switches, fast share %.1f%%; thresholds x1000: %llu probes; "
                "th_cong x1000: %llu probes, %llu switches\n",
                static_cast<unsigned long long>(h.scheme_counter("hopper_probes")), static_cast<unsigned long long>(h.scheme_counter("hopper_switches")),
                100 * fast_share(hopper), static_cast<unsigned long long>(never_congested.summary.scheme_counter("hopper_probes")),
                static_cast<unsigned long long>(probe_only.summary.scheme_counter("hopper_probes")),
                static_cast<unsigned long long>(probe_only.summary.scheme_counter("hopper_switches")));
    ASSERT_LT(fast_share(never_congested), 0.01) << "the flow starts on the slow path";
    EXPECT_EQ(never_congested.summary.scheme_counter("hopper_probes"), 0u);
    EXPECT_GT(probe_only.summary.scheme_counter("hopper_probes"), 0u);
    EXPECT_EQ(probe_only.summary.scheme_counter("hopper_switches"), 0u);
    EXPECT_GE(h.scheme_counter("hopper_switches"), 1u);
    EXPECT_GT(fast_share(hopper), 0.5) << "it moved to the 100 Gb/s path";
    EXPECT_LT(hopper.summary.fct_us.max, never_congested.summary.fct_us.max);
}

// Hopper does not move when every path is as congested (an in-cast at the
// receiver's link): its probes find nothing clearly better.
TEST(Hopper_Sec3, NoSwitchWhenEveryPathIsAsCongested)
{
    const auto o = run(leaf_spine_2x4("scheme: hopper\n"
                                      "fabric: {pfc: true}\n"
                                      "traffic:\n"
                                      "  - flows: [{src: h0_0, dst: h1_0, bytes: 4000000}, {src: h0_1, dst: h1_0, bytes: 4000000}]\n"));
    const auto& h = o.summary;
    std::printf("in-cast: %llu probes, %llu switches\n", static_cast<unsigned long long>(h.scheme_counter("hopper_probes")),
                static_cast<unsigned long long>(h.scheme_counter("hopper_switches")));
    EXPECT_GT(h.scheme_counter("hopper_probes"), 0u) << "the RTT rose above 1.5 x base";
    EXPECT_EQ(h.scheme_counter("hopper_switches"), 0u);
}

// FlowBender (Hopper's baseline): a random new path after a congested round.
TEST(FlowBender, ReroutesBlindlyOnMarkedRounds)
{
    const auto fb = run(three_hosts("flowbender", "fabric: {pfc: true}\n"));
    const auto& f = fb.summary;
    std::printf("%llu reroutes, fast share %.1f%%\n", static_cast<unsigned long long>(f.scheme_counter("flowbender_reroutes")),
                100 * fast_share(fb));
    EXPECT_GE(f.scheme_counter("flowbender_reroutes"), 1u);
    EXPECT_EQ(f.scheme_counter("path_changes"), f.scheme_counter("flowbender_reroutes"));
    EXPECT_EQ(f.scheme_counter("hopper_probes"), 0u) << "no probing: the new path is chosen blindly";
}

// Selective spraying (seed 004): the elephant sprays over every path, the mouse keeps one.
TEST(SelectiveSpraying, SpraysOnlyElephants)
{
    const auto o = run(leaf_spine_2x4("scheme: selective\n"
                                      "roce: {selective: {elephant_bytes: 1000000}}\n"
                                      "traffic:\n"
                                      "  - flows: [{src: h0_0, dst: h1_0, bytes: 200000}, {src: h0_1, dst: h1_1, bytes: 4000000}]\n"));
    const auto mouse = paths_used(o.per_path.at(0));
    const auto elephant = paths_used(o.per_path.at(1));
    std::printf("mouse on %zu path(s), elephant on %zu\n", mouse, elephant);
    EXPECT_EQ(o.summary.scheme_counter("sprayed_flows"), 1u);
    EXPECT_EQ(mouse, 1u);
    EXPECT_EQ(elephant, 4u);
}

// TELB (seed 004): a policy rule pins a traffic item to one path and no
// congestion moves it; the rule's path decides which.
TEST(TELB, NeverLeavesItsPinnedPath)
{
    const auto pinned = [](int path) {
        return run(leaf_spine_2x4("scheme: telb\n"
                                  "fabric: {pfc: true}\n"
                                  "roce: {telb: [{item: 0, path: " +
                   std::to_string(path) +
                   "}]}\n"
                   "traffic:\n"
                   "  - flows: [{src: h0_0, dst: h1_0, bytes: 2000000}, {src: h0_1, dst: h1_0, bytes: 2000000}]\n"));
    };
    const auto p1 = pinned(1);
    const auto p2 = pinned(2);
    EXPECT_EQ(p1.summary.scheme_counter("telb_pinned"), 2u);
    EXPECT_EQ(p1.summary.scheme_counter("path_changes"), 0u);
    for (const auto* o : {&p1, &p2}) {
        EXPECT_EQ(paths_used(o->per_path.at(0)), 1u);
        EXPECT_EQ(paths_used(o->per_path.at(1)), 1u);
    }
    EXPECT_NE(p1.per_path.at(0), p2.per_path.at(0)) << "another rule, another path";
}

// ECMP with and without QP entropy (seed 004, "RoCEv2 BTH QP"): without it
// every QP of a host pair hashes to the same path.
TEST(ECMP_QpEntropy, WithoutItAHostPairsQpsShareOnePath)
{
    std::string flows = "  - flows: [";
    for (int i = 0; i < 8; ++i) {
        flows += std::string(i ? ", " : "") + "{src: h0_0, dst: h1_0, bytes: 100000}";
    }
    flows += "]\n";
    const auto yaml = [&](const std::string& scheme) {
        return leaf_spine_2x4("scheme: " + scheme + "\ntraffic:\n" + flows);
    };
    const auto noqp = run(yaml("ecmp_noqp"));
    const auto qp = run(yaml("ecmp"));
    std::printf("8 QPs h0_0 -> h1_0: %zu path(s) without QP entropy, %zu with\n", paths_used(noqp.per_path.at(0)),
                paths_used(qp.per_path.at(0)));
    EXPECT_EQ(paths_used(noqp.per_path.at(0)), 1u);
    EXPECT_GE(paths_used(qp.per_path.at(0)), 2u);
}

// DLB (seed 004): a new flow takes the uplink with the better local quality.
// Two flows from one leaf, the second starting 200 us into the first (the
// load estimate, CONGA's DRE, needs a few 50 us periods): they end on
// different spines, where ECMP's hash may stack them.
TEST(DLB, ANewFlowletTakesTheLessLoadedUplink)
{
    const auto o = run("version: 1\n"
                       "topology: 'leaf_spine:leaves=2,spines=2,hosts_per_leaf=2'\n"
                       "candidates: 'yen:k=2,stretch=1'\n"
                       "scheme: dlb\n"
                       "traffic:\n"
                       "  - flows: [{src: h0_0, dst: h1_0, bytes: 8000000}, {src: h0_1, dst: h1_1, bytes: 8000000, start_us: 200}]\n");
    const auto s0 = port_bytes(o, "leaf0->spine0");
    const auto s1 = port_bytes(o, "leaf0->spine1");
    std::printf("leaf0 uplinks: %llu and %llu bytes\n", static_cast<unsigned long long>(s0),
                static_cast<unsigned long long>(s1));
    EXPECT_GT(s0, 7'900'000u);
    EXPECT_GT(s1, 7'900'000u);
    EXPECT_EQ(o.summary.scheme_counter("flowlets"), 2u) << "RDMA without gaps: one flowlet per flow";
}

// Reunion (seed 000, Algorithms 1-2, t = 1): two elephants that ECMP stacks
// on one spine; the destination switch notifies, the source switch moves one
// of them (at most t per bottleneck link) and they finish on two spines.
TEST(Reunion_Alg1_2, ReroutesOneOfTwoCollidingElephants)
{
    const auto yaml = [](const std::string& scheme, int seed) {
        return "version: 1\n"
               "topology: 'leaf_spine:leaves=2,spines=2,hosts_per_leaf=2'\n"
               "candidates: 'yen:k=2,stretch=1'\n"
               "scheme: " +
               scheme + "\nseed: " + std::to_string(seed) +
               "\nroce: {reunion: {interval_us: 100}}\n"
               "traffic:\n"
               "  - flows: [{src: h0_0, dst: h1_0, bytes: 8000000}, {src: h0_1, dst: h1_1, bytes: 8000000}]\n";
    };
    // A seed under which ECMP puts both on one uplink (its per-switch salt follows the seed).
    int seed = 0;
    for (int s = 1; s <= 32 && seed == 0; ++s) {
        const auto ecmp = run(yaml("ecmp", s));
        if (port_bytes(ecmp, "leaf0->spine0") == 0 || port_bytes(ecmp, "leaf0->spine1") == 0) {
            seed = s;
        }
    }
    ASSERT_NE(seed, 0) << "no seed in 1..32 stacks the two flows";
    const auto ecmp = run(yaml("ecmp", seed));
    const auto reunion = run(yaml("reunion", seed));
    const auto& r = reunion.summary;
    std::printf("seed %d: %llu elephants, %llu marks, %llu notifications, %llu reroutes; FCT %.1f vs ECMP %.1f us\n",
                seed, static_cast<unsigned long long>(r.scheme_counter("reunion_elephants")),
                static_cast<unsigned long long>(r.scheme_counter("reunion_marks")), static_cast<unsigned long long>(r.scheme_counter("reunion_notifies")),
                static_cast<unsigned long long>(r.scheme_counter("reunion_reroutes")), reunion.summary.fct_us.max,
                ecmp.summary.fct_us.max);
    EXPECT_EQ(r.scheme_counter("reunion_elephants"), 2u);
    EXPECT_GT(r.scheme_counter("reunion_marks"), 0u);
    EXPECT_GE(r.scheme_counter("reunion_notifies"), 1u);
    EXPECT_EQ(r.scheme_counter("reunion_reroutes"), 1u) << "one of the two moves, the other keeps its path";
    EXPECT_GT(port_bytes(reunion, "leaf0->spine0"), 1'000'000u);
    EXPECT_GT(port_bytes(reunion, "leaf0->spine1"), 1'000'000u);
    EXPECT_LT(reunion.summary.fct_us.max, 0.9 * ecmp.summary.fct_us.max);
}

// --- The host-side policies on the LAPS engine (selection.policy; pipeline/policies.cpp) ---

namespace {

std::string engine_three_hosts(const std::string& policy, const std::string& extra = "")
{
    return "version: 1\n"
           "topology: tests/testbed/conweave_3hosts.yaml\n"
           "candidates: 'yen:k=2'\n"
           "scheme: laps\n"
           "fabric: {pfc: true, red_kmin_bytes: 10000, red_kmax_bytes: 40000}\n"
           "selection: {policy: " +
           policy + extra +
           "}\n"
           "traffic:\n"
           "  - flows: [{src: a, dst: b, bytes: 4000000}]\n";
}

} // namespace

// REPS on the engine (seed 001, §3): slots whose ACKs come back without an
// ECN echo are sent again; the testbed marks LAPS DATA for it (ECN on by
// default under reps). Against uniform spraying, REPS leaves the 40 Gb/s path.
TEST(REPS_Sec3_Engine, RecyclesTheSlotsOfUnmarkedAcks)
{
    const auto reps = run(engine_three_hosts("reps"));
    const auto spray = run(engine_three_hosts("spray"));
    std::printf("engine fast-path share: reps %.1f%%, spray %.1f%%; FCT %.1f vs %.1f us\n", 100 * fast_share(reps),
                100 * fast_share(spray), reps.summary.fct_us.max, spray.summary.fct_us.max);
    EXPECT_NEAR(fast_share(spray), 0.5, 0.05);
    EXPECT_GT(fast_share(reps), fast_share(spray) + 0.05);
    EXPECT_LT(reps.summary.fct_us.max, spray.summary.fct_us.max);
}

// Hopper on the engine (seed 002, §3): the flow starts on its hashed slot (the
// 40 Gb/s path), LAPS probes measure the alternative, the flow moves once.
// With the thresholds out of reach it neither probes nor moves.
TEST(Hopper_Sec3_Engine, MovesOnceToTheProbedFasterPath)
{
    const auto hopper = run(engine_three_hosts("hopper"));
    const auto still = run(engine_three_hosts("hopper", ", hopper: {probe_threshold: 1000, congestion_threshold: 1000}"));
    std::printf("engine hopper: %llu moves, %llu probes, fast share %.1f%%; thresholds x1000: %llu moves, %llu probes, "
                "fast share %.1f%%\n",
                static_cast<unsigned long long>(hopper.summary.engines.policy_repaths),
                static_cast<unsigned long long>(hopper.summary.engines.probe_sent), 100 * fast_share(hopper),
                static_cast<unsigned long long>(still.summary.engines.policy_repaths),
                static_cast<unsigned long long>(still.summary.engines.probe_sent), 100 * fast_share(still));
    ASSERT_LT(fast_share(still), 0.01) << "the flow's hash pins it to the 40 Gb/s path";
    EXPECT_EQ(still.summary.engines.policy_repaths, 0u);
    EXPECT_EQ(still.summary.engines.probe_sent, 0u);
    EXPECT_EQ(hopper.summary.engines.policy_repaths, 1u);
    EXPECT_GE(hopper.summary.engines.probe_sent, 1u);
    EXPECT_GT(fast_share(hopper), 0.9);
}

// FlowBender on the engine: ECN-marked rounds move the flow blindly.
TEST(FlowBender_Engine, MovesAfterAMarkedRound)
{
    const auto fb = run(engine_three_hosts("flowbender"));
    std::printf("engine flowbender: %llu moves, fast share %.1f%%\n",
                static_cast<unsigned long long>(fb.summary.engines.policy_repaths), 100 * fast_share(fb));
    EXPECT_GE(fb.summary.engines.policy_repaths, 1u);
    EXPECT_EQ(fb.summary.engines.probe_sent, 0u) << "no probing";
}

// Selective spraying on the engine (seed 004): the mouse keeps its hashed
// path, the elephant sprays by Eq. 1 once it has sent elephant_bytes.
TEST(SelectiveSpraying_Engine, SpraysOnlyElephants)
{
    const auto o = run(leaf_spine_2x4("scheme: laps\n"
                                      "selection: {policy: selective, selective: {elephant_bytes: 1000000}}\n"
                                      "traffic:\n"
                                      "  - flows: [{src: h0_0, dst: h1_0, bytes: 200000}, {src: h0_1, dst: h1_1, bytes: 4000000}]\n"));
    const auto mouse = paths_used(o.per_path.at(0));
    const auto elephant = paths_used(o.per_path.at(1));
    std::printf("engine: mouse on %zu path(s), elephant on %zu\n", mouse, elephant);
    EXPECT_EQ(mouse, 1u);
    EXPECT_EQ(elephant, 4u);
}

// A failed path gives no samples: Hopper's and FlowBender's flows on it move
// on their retransmission timeouts (FlowBender's second trigger; Hopper has
// no rule for it, docs/testbed.md), in the RoCE model and on the engine, and
// so does a selective-spraying mouse on the engine (1 MB flows: mice until
// their last byte).
// Three of four spines lose their links to leaf1 at 20 us, silently.
TEST(PinnedPolicies_Failures, FlowsOnAFailedPathMoveOnTimeouts)
{
    const auto yaml = [](const std::string& scheme, const std::string& policy) {
        return leaf_spine_2x4(
            "scheme: " + scheme + "\nselection: {policy: " + policy +
            "}\n"
            "traffic:\n"
            "  - flows: [{src: h0_0, dst: h1_0, bytes: 1000000}, {src: h0_1, dst: h1_1, bytes: 1000000},\n"
            "            {src: h0_0, dst: h1_1, bytes: 1000000}, {src: h0_1, dst: h1_0, bytes: 1000000}]\n"
            "faults:\n"
            "  - {at_us: 20, link: [spine0, leaf1], action: blackhole}\n"
            "  - {at_us: 20, link: [spine1, leaf1], action: blackhole}\n"
            "  - {at_us: 20, link: [spine2, leaf1], action: blackhole}\n");
    };
    for (const auto& [scheme, policy] : std::vector<std::pair<std::string, std::string>>{
             {"hopper", "laps"}, {"flowbender", "laps"}, {"laps", "hopper"}, {"laps", "flowbender"},
             {"laps", "selective"}}) {
        SCOPED_TRACE(scheme + "/" + policy);
        const auto o = run(yaml(scheme, policy));
        const auto moves = scheme == "laps" ? o.summary.engines.policy_repaths : o.summary.scheme_counter("path_changes");
        std::printf("%s/%s: %llu moves, last flow at %.1f us\n", scheme.c_str(), policy.c_str(),
                    static_cast<unsigned long long>(moves), o.summary.fct_us.max);
        EXPECT_GE(moves, 1u);
    }
}

// GLB (seed 004, "Why Local Link Quality Is Not Enough"): a flow from leaf2
// loads one spine's link to leaf1; 200 us later a flow from leaf0 to leaf1
// sees both of its own uplinks idle. DLB (local quality) picks at random and
// stacks the two on one spine-to-leaf1 link in some seeds; GLB sees that
// link in its heartbeats and never does.
TEST(GLB, RemoteQualityKeepsANewFlowOffALoadedSpineLink)
{
    const auto stacked = [](const std::string& scheme, int seed) {
        const auto o = run("version: 1\n"
                           "topology: 'leaf_spine:leaves=3,spines=2,hosts_per_leaf=2'\n"
                           "candidates: 'yen:k=2,stretch=1'\n"
                           "scheme: " +
                           scheme + "\nseed: " + std::to_string(seed) +
                           "\ntraffic:\n"
                           "  - flows: [{src: h2_0, dst: h1_0, bytes: 8000000},\n"
                           "            {src: h0_0, dst: h1_1, bytes: 8000000, start_us: 200}]\n");
        return port_bytes(o, "spine0->leaf1") == 0 || port_bytes(o, "spine1->leaf1") == 0;
    };
    int dlb_stacked = 0;
    int glb_stacked = 0;
    for (int seed = 1; seed <= 6; ++seed) {
        dlb_stacked += stacked("dlb", seed) ? 1 : 0;
        glb_stacked += stacked("glb", seed) ? 1 : 0;
    }
    std::printf("6 seeds: DLB stacked the flows %d times, GLB %d\n", dlb_stacked, glb_stacked);
    EXPECT_GE(dlb_stacked, 1);
    EXPECT_EQ(glb_stacked, 0);
}

// Selective spraying's marking rules (seed 004: "size, QP or DSCP"): a mouse
// of a marked traffic item (a job's QPs) sprays in the RoCE model, a mouse
// whose DSCP the rule lists sprays on the engine (the testbed's host frames
// carry DSCP 0).
TEST(SelectiveSpraying, MarkedMiceSprayToo)
{
    const std::string mouse = "traffic:\n  - flows: [{src: h0_0, dst: h1_0, bytes: 400000}]\n";
    const auto roce = run(leaf_spine_2x4("scheme: selective\nroce: {selective: {items: [0]}}\n" + mouse));
    const auto roce_unmarked = run(leaf_spine_2x4("scheme: selective\nroce: {selective: {items: [1]}}\n" + mouse));
    const auto engine = run(leaf_spine_2x4("scheme: laps\nselection: {policy: selective, selective: {dscp: [0]}}\n" + mouse));
    const auto engine_unmarked =
        run(leaf_spine_2x4("scheme: laps\nselection: {policy: selective, selective: {dscp: [46]}}\n" + mouse));
    std::printf("marked mouse on %zu / %zu paths (RoCE / engine), unmarked on %zu / %zu\n",
                paths_used(roce.per_path.at(0)), paths_used(engine.per_path.at(0)),
                paths_used(roce_unmarked.per_path.at(0)), paths_used(engine_unmarked.per_path.at(0)));
    EXPECT_EQ(roce.summary.scheme_counter("sprayed_flows"), 1u);
    EXPECT_EQ(paths_used(roce.per_path.at(0)), 4u);
    EXPECT_EQ(paths_used(roce_unmarked.per_path.at(0)), 1u);
    EXPECT_GE(paths_used(engine.per_path.at(0)), 3u);
    EXPECT_EQ(paths_used(engine_unmarked.per_path.at(0)), 1u);
}
