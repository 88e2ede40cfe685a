// Scenario files: every file in configs/scenarios loads (topology, workloads,
// host and link names resolve), and mistakes are reported as
// file:line:col: key: what, with unknown keys rejected.
#include "helpers.hpp"

#include "config/reader.hpp"

#include <filesystem>

using namespace laps;
using namespace laps::test;

TEST(IV_Scenarios, EveryShippedScenarioLoads)
{
    const std::filesystem::path root(LAPS_SOURCE_ROOT);
    std::vector<std::filesystem::path> files;
    for (const auto* folder : {"scenarios", "ablations"}) {
        for (const auto& e : std::filesystem::directory_iterator(root / "configs" / folder)) {
            if (e.path().extension() == ".yaml") {
                files.push_back(e.path());
            }
        }
    }
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 20u);
    for (const auto& f : files) {
        SCOPED_TRACE(f.string());
        fabric::scenario s;
        ASSERT_NO_THROW(s = fabric::load_scenario(f.string()));
        EXPECT_EQ(s.name, f.stem().string()) << "name matches the file";
        EXPECT_FALSE(s.traffic.empty());
        const auto plan = fabric::simulation::plan(s);
        EXPECT_GT(plan.frames, 0u);
        EXPECT_LT(plan.pools_and_tables_bytes(), std::uint64_t{8} << 30)
            << "a shipped scenario's pools and tables fit in 8 GB at its default scale";
    }
}

namespace {

std::string error_of(const std::string& yaml)
{
    try {
        scenario_from(yaml, "bad.yaml");
    } catch (const config::config_error& e) {
        return e.what();
    }
    return "no error";
}

const std::string head = "version: 1\ntopology: 'leaf_spine:leaves=2,spines=2,hosts_per_leaf=2'\n";

} // namespace

TEST(IV_Scenarios, ErrorsNameFileLineAndKey)
{
    EXPECT_EQ(error_of(head + "traffic:\n  - llm: {pattern: allreduce, mesage_bytes: 10}\n"),
              "bad.yaml:4:31: traffic[0].llm.mesage_bytes: unknown key (known here: pattern, message_bytes, root, "
              "hosts, start_us, poisson_starts_us)");
    EXPECT_EQ(error_of(head + "traffic:\n  - llm: {pattern: allgather}\n"),
              "bad.yaml:4:20: traffic[0].llm.pattern: 'allgather' is not one of: all2all, allreduce, allscatter, permutation");
    EXPECT_EQ(error_of(head + "traffic:\n  - flows: [{src: h0_0, dst: nobody, bytes: 10}]\n"),
              "bad.yaml:4:30: traffic[0].flows[0].dst: no node named 'nobody' in the topology");
    EXPECT_EQ(error_of(head + "traffic:\n  - flows: [{src: 0, dst: leaf0, bytes: 10}]\n"),
              "bad.yaml:4:27: traffic[0].flows[0].dst: 'leaf0' is a switch, not a host");
    EXPECT_EQ(error_of(head + "fabric: {port_queue_byte: 1}\ntraffic:\n  - flows: [{src: 0, dst: 1, bytes: 10}]\n"),
              "bad.yaml:3:10: fabric.port_queue_byte: unknown key (known here: port_queue_bytes, "
              "shared_buffer_bytes, ecn_threshold_bytes, host_queue_bytes, frame_bytes, memory_mb, pfc, "
              "pfc_xoff_bytes, pfc_xon_bytes, ecn, red_kmin_bytes, red_kmax_bytes, red_pmax)");
    EXPECT_EQ(error_of(head + "traffic:\n  - flows: [{src: 0, dst: 1, bytes: 10}]\n"
                              "faults:\n  - {link: [h0_0, spine0], action: down}\n"),
              "bad.yaml:6:12: faults[0].link: no link between 'h0_0' and 'spine0'");
    EXPECT_EQ(error_of(head + "traffic:\n  - flows: [{src: 0, dst: 1, bytes: 10}]\n"
                              "faults:\n  - {link: all, action: loss}\n"),
              "bad.yaml:6:5: faults[0].probability: missing (required for action loss)");
    EXPECT_EQ(error_of(head + "traffic:\n  - poisson: {workload: no/such.cdf, load: 0.5, duration_us: 10}\n"),
              "bad.yaml:4:25: traffic[0].poisson.workload: " + std::string(LAPS_SOURCE_ROOT) +
                  "/no/such.cdf: cannot open the flow-size CDF");
    // The LAPS sections are those of a laps config file, checked the same way.
    EXPECT_EQ(error_of(head + "selection: {beta: {mode: fixed}}\ntraffic:\n  - flows: [{src: 0, dst: 1, bytes: 10}]\n"),
              "bad.yaml:3:19: selection.beta.per_us: missing (required)");
    EXPECT_EQ(error_of(head + "paths: {}\ntraffic: []\n"),
              "bad.yaml:3:1: paths: unknown key (known here: version, name, description, seed, scale, topology, "
              "candidates, fabric, engine, clocks, traffic, faults, run, selection, congestion, retransmit, tables, "
              "baseval, scheme, roce)");
    EXPECT_EQ(error_of("version: 1\ntopology: nowhere.yaml\ntraffic: []\n").rfind("bad.yaml:2:11: topology: ", 0), 0u);
    // The other seeds' systems (docs/testbed.md, Schemes): their roce.<name> sections.
    const std::string flows = "traffic:\n  - flows: [{src: 0, dst: 1, bytes: 10}]\n";
    EXPECT_EQ(error_of(head + "roce: {telb: [{item: 0}]}\n" + flows), "bad.yaml:3:15: roce.telb[0].path: missing (required)");
    EXPECT_EQ(error_of(head + "roce: {telb: {item: 0}}\n" + flows).rfind("bad.yaml:3:14: roce.telb: expected a list", 0), 0u);
    EXPECT_EQ(error_of(head + "roce: {hopper: {probe_threshold: 3, congestion_threshold: 2}}\n" + flows),
              "bad.yaml:3:16: roce.hopper: congestion_threshold must be at least probe_threshold (Hopper probes "
              "before it switches)");
    EXPECT_EQ(error_of(head + "roce: {reunion: {tolerance: 0}}\n" + flows).rfind("bad.yaml:3:29: roce.reunion.tolerance", 0), 0u);
    EXPECT_EQ(error_of(head + "roce: {selective: {classify: size}}\n" + flows),
              "bad.yaml:3:30: roce.selective.classify: 'size' is not one of: posted, sent");
    EXPECT_EQ(error_of(head + "roce: {reorder_tolerance_packets: -3}\n" + flows).rfind("bad.yaml:3:35: roce.reorder_tolerance_packets", 0), 0u);
    EXPECT_EQ(error_of(head + "scheme: hoper\n" + flows).rfind("bad.yaml:3:9: scheme: 'hoper' is not one of: laps, ecmp, letflow, plb, conga, conweave, ecmp_noqp, rps, reps, hopper, flowbender, selective, dlb, telb, glb, reunion", 0), 0u);
}

TEST(IV_Scenarios, WorkloadsAreNormalisedAndSampledWithinTheirRange)
{
    // hadoop.cdf is on the 0..100 scale: without normalising, its mean would be off by 100x.
    const auto hadoop = fabric::flow_size_cdf::load(std::string(LAPS_SOURCE_ROOT) + "/configs/workloads/hadoop.cdf");
    const auto websearch =
        fabric::flow_size_cdf::load(std::string(LAPS_SOURCE_ROOT) + "/configs/workloads/websearch.cdf");
    EXPECT_NEAR(hadoop.points().back().probability, 1.0, 1e-12);
    EXPECT_NEAR(websearch.mean_bytes(), 1'711'250, 1'000);
    common::rng rng(1);
    double sum = 0;
    constexpr int n = 200'000;
    for (int i = 0; i < n; ++i) {
        const auto v = websearch.sample(rng);
        ASSERT_GE(v, 1u);
        ASSERT_LE(v, 30'000'000u);
        sum += static_cast<double>(v);
    }
    EXPECT_NEAR(sum / n, websearch.mean_bytes(), 0.03 * websearch.mean_bytes());
}
