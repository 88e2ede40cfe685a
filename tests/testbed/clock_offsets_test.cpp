// §II-C ("no need for the nodes to synchronize their clocks") and docs/design.md §3:
// every host clock is shifted by a random offset of up to +-1 ms, and the
// engines estimate each pair's offset (tables.clocks: unsynchronized). Eq. 1
// only compares latencies of one pair, and Alg. 1-3 use the offset-free
// realVal, so nothing may change: path shares, AIMD actions and FCTs are
// identical, packet for packet, to the run with synchronised clocks.
#include "helpers.hpp"

using namespace laps;
using namespace laps::test;

namespace {

struct outcome {
    std::vector<fabric::time_ns> ends;
    std::vector<std::vector<std::uint64_t>> per_path;
    fabric::run_summary summary;
    std::vector<fabric::time_ns> offsets;
};

outcome run(const std::string& clocks)
{
    const auto s = scenario_from("version: 1\n"
                                 "topology: 'rail:clusters=2,gpus=4'\n" +
                                 clocks +
                                 "traffic:\n"
                                 "  - llm: {pattern: all2all, message_bytes: 300000}\n"
                                 "  - llm: {pattern: allreduce, message_bytes: 500000, root: gpu1_2}\n");
    fabric::simulation sim(s);
    sim.run();
    outcome o;
    for (const auto& f : sim.flows()) {
        o.ends.push_back(f.end);
    }
    for (const auto& h : sim.hosts()) {
        const auto counts = sim.engine(h.id).packets_per_path();
        o.per_path.emplace_back(counts.begin(), counts.end());
        o.offsets.push_back(h.clock_offset_ns);
    }
    o.summary = fabric::summarize(sim);
    expect_no_leak(sim);
    return o;
}

} // namespace

TEST(II_C_UnsynchronisedClocks, RandomOffsetsChangeNeitherPathSharesNorFcts)
{
    const auto synced = run("");
    const auto skewed = run("clocks: {offset_max_us: 1000}\n");

    // The offsets really differ between hosts.
    fabric::time_ns lo = skewed.offsets.front();
    fabric::time_ns hi = lo;
    for (const auto o : skewed.offsets) {
        lo = std::min(lo, o);
        hi = std::max(hi, o);
    }
    EXPECT_GT(hi - lo, 500'000) << "offsets should spread over most of +-1 ms";

    ASSERT_EQ(synced.summary.completed, synced.summary.flows);
    EXPECT_EQ(skewed.summary.completed, skewed.summary.flows);
    EXPECT_EQ(skewed.ends, synced.ends) << "every flow ends at the same virtual time";
    EXPECT_EQ(skewed.per_path, synced.per_path) << "every path carries the same packets";
    EXPECT_EQ(skewed.summary.engines.aimd_decrease, synced.summary.engines.aimd_decrease);
    EXPECT_EQ(skewed.summary.engines.probe_sent, synced.summary.engines.probe_sent);
    EXPECT_EQ(skewed.summary.retransmissions, synced.summary.retransmissions);
    std::printf("flows %zu, last FCT %.1f us in both runs, %llu AIMD decreases, %llu probes\n",
                synced.summary.flows, synced.summary.fct_us.max,
                static_cast<unsigned long long>(synced.summary.engines.aimd_decrease),
                static_cast<unsigned long long>(synced.summary.engines.probe_sent));
}
