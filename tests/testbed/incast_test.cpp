// §III-F, Alg. 2: AllReduce in-cast (7 GPUs of a 2 x 4 rail send 4 MB each
// to one), DropTail 150 KB. All paths of every sender end in the receiver's
// two ports, so all their latencies rise together and AIMD cuts the rates.
// Compared with the same in-cast with rates pinned at line rate (floor = cap:
// no congestion control), AIMD keeps the bottleneck queue well below its
// limit on average and drops far fewer packets.
#include "helpers.hpp"

using namespace laps;
using namespace laps::test;

namespace {

struct incast_result {
    fabric::run_summary summary;
    double bottleneck_mean_queue = 0; // busiest receiver port, time average
    std::uint64_t bottleneck_max_queue = 0;
};

incast_result run_incast(const std::string& congestion)
{
    const auto s = scenario_from("version: 1\n"
                                 "topology: 'rail:clusters=2,gpus=4'\n" +
                                 congestion +
                                 "traffic:\n"
                                 "  - llm: {pattern: allreduce, message_bytes: 4000000, root: gpu0_0}\n");
    fabric::simulation sim(s);
    sim.run();
    incast_result r;
    r.summary = fabric::summarize(sim);
    const auto receiver = *sim.topology().find("gpu0_0");
    for (const auto& p : sim.ports()) {
        if (p.to != receiver) {
            continue;
        }
        const double mean = p.counters.queue_byte_ns / static_cast<double>(sim.now());
        if (mean > r.bottleneck_mean_queue) {
            r.bottleneck_mean_queue = mean;
            r.bottleneck_max_queue = p.counters.max_queue_bytes;
        }
    }
    expect_no_leak(sim);
    std::printf("%s: decreases %llu, DATA drops %llu, bottleneck queue mean %.0f B max %llu B, last FCT %.0f us\n",
                congestion.empty() ? "AIMD" : "no CC",
                static_cast<unsigned long long>(r.summary.engines.aimd_decrease),
                static_cast<unsigned long long>(r.summary.data_dropped), r.bottleneck_mean_queue,
                static_cast<unsigned long long>(r.bottleneck_max_queue), r.summary.fct_us.max);
    return r;
}

} // namespace

TEST(III_F_CongestionControl, IncastTriggersAimdDecreasesAndKeepsQueuesBelowTheLimit)
{
    const auto aimd = run_incast("");
    const auto fixed_rate = run_incast("congestion: {rate_floor_gbps: 100, rate_cap_gbps: 100}\n");
    const double limit = 150'000;

    EXPECT_EQ(aimd.summary.completed, aimd.summary.flows);
    EXPECT_EQ(aimd.summary.bytes_delivered, aimd.summary.bytes_offered);
    EXPECT_GT(aimd.summary.engines.aimd_decrease, 50u);
    EXPECT_LE(aimd.summary.queues.max_switch_queue_bytes, 150'000u);
    EXPECT_LT(aimd.bottleneck_mean_queue, 0.25 * limit);
    // Without congestion control the in-cast pins the queue at its limit.
    EXPECT_GT(fixed_rate.bottleneck_mean_queue, 0.75 * limit);
    EXPECT_LT(aimd.summary.data_dropped * 5, fixed_rate.summary.data_dropped);
}
