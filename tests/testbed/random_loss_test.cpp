// §III-G, Alg. 3 and Table III's loss column: 1e-4 random loss on every link.
// A leaf-spine with full bisection (4 leaves x 4 hosts, 4 spines, shortest
// paths only) and a permutation of 12 MB flows: queues stay short, so random
// loss is the only loss.
//   - Every flow completes; bytes delivered == bytes offered exactly, and no
//     host ever sees a frame twice.
//   - Each lost packet costs one resend: a lost DATA is found by the next
//     ACK on its path (gap) or by its path's timeout; a lost ACK makes its
//     DATA look lost too (the receiver then drops the duplicate). So resends
//     = DATA lost + ACK lost, within 10%: no spurious resends beyond those.
#include "helpers.hpp"

using namespace laps;
using namespace laps::test;

TEST(III_G_RandomLoss, EveryByteArrivesOnceAndResendsMatchTrueLosses)
{
    std::string flows;
    for (int i = 0; i < 16; ++i) {
        flows += "    - {src: " + std::to_string(i) + ", dst: " + std::to_string((i + 4) % 16) + ", bytes: 12000000}\n";
    }
    const auto s = scenario_from("version: 1\n"
                                 "topology: 'leaf_spine:leaves=4,spines=4,hosts_per_leaf=4'\n"
                                 "candidates: 'yen:k=4,stretch=1'\n"
                                 "traffic:\n"
                                 "  - flows:\n" +
                                 flows +
                                 "faults:\n"
                                 "  - {link: all, action: loss, probability: 1e-4}\n");
    const auto r = run_to_end(s);
    const std::uint64_t lost = r.data_dropped + r.acks_dropped;
    std::printf("flows %zu/%zu, DATA lost %llu, ACK lost %llu, resends %llu, duplicates %llu\n", r.completed,
                r.flows, static_cast<unsigned long long>(r.data_dropped),
                static_cast<unsigned long long>(r.acks_dropped), static_cast<unsigned long long>(r.retransmissions),
                static_cast<unsigned long long>(r.spurious));
    EXPECT_EQ(r.completed, r.flows);
    EXPECT_EQ(r.bytes_delivered, r.bytes_offered);
    EXPECT_EQ(r.host_duplicates, 0u);
    ASSERT_GT(r.data_dropped, 40u) << "enough losses to say something";
    std::uint64_t other = 0;
    for (const auto& per_class : r.drops) {
        for (std::size_t why = 0; why < per_class.size(); ++why) {
            if (why != static_cast<std::size_t>(fabric::drop_reason::random_loss)) {
                other += per_class[why];
            }
        }
    }
    EXPECT_EQ(other, 0u) << "only the random loss drops packets here";
    EXPECT_NEAR(static_cast<double>(r.retransmissions), static_cast<double>(lost), 0.1 * static_cast<double>(lost));
    // Duplicates at receivers come from lost ACKs, not from mistaken timeouts.
    EXPECT_LE(r.spurious, r.acks_dropped + lost / 10);
}
