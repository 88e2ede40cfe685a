// Coalesced ACKs end to end (docs/wire-format.md "ACK_RUN"): a coalescing
// receiver answers one receive burst with one ACK_RUN per (flow, path), and
// the sender takes from it exactly what it takes from that many ACKs (paper
// §III-E..G: every DATA's latency sample, Alg. 2's rate, Alg. 3's per-path
// loss detection).
#include "harness.hpp"

#include "wire/ack_run.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace laps;
using namespace laps::test;

namespace {

constexpr common::time_ns us = 1000;
constexpr std::uint32_t frames_per_burst = 32;

struct sender_state {
    pipeline::engine_counters counters;
    std::vector<pipeline::engine::path_counters> paths;
    std::vector<common::time_ns> real; // realVal per pid
    double rate_bps = 0;
    double expected_bps = 0;
    std::uint32_t in_flight = 0;
    std::uint32_t lost_pending = 0;
    pipeline::engine_counters receiver;
    std::map<wire::packet_type, std::uint32_t> answer_packets; // what the receiver sent back
    std::map<wire::packet_type, std::uint32_t> answers;        // DATA answered, by packet type
};

struct ack_run : ::testing::Test {
    pool_ptr frames = make_pool("ar_frames", 1024);
    pool_ptr control = make_pool("ar_control", 1024, wire::coalescing_mbuf_data_room);

    void TearDown() override
    {
        EXPECT_EQ(in_use(frames.get()), 0u) << "host frames leaked";
        EXPECT_EQ(in_use(control.get()), 0u) << "control mbufs leaked";
    }

    // Host 1 sends `frames_per_burst` frames of one flow to host 2 over two
    // paths (pids 0 and 1, 10 and 12 us); all its DATA but those `lost`
    // drops (by sequence number) reach host 2 in one receive burst; host 2
    // answers per packet or coalesced; host 1 takes the answers in one burst.
    sender_state run(const std::string& name, pipeline::ack_mode acks, std::set<std::uint32_t> lost = {},
                     bool authenticated = false)
    {
        auto ac = host_config(name + "_a", 1, control.get());
        ac.algo.paths.pit = {path_row(0, 10 * us, {100}), path_row(1, 12 * us, {200, 201})};
        ac.algo.paths.pst = {{tables::address::ipv4(0x0a000002), {0, 1}}};
        ac.algo.selection.probing = false;
        ac.algo.congestion.aimd.cap_bps = 100e9;
        ac.algo.congestion.pacer_burst_bytes = 1 << 20;
        auto bc = host_config(name + "_b", 2, control.get());
        bc.acks = acks;
        if (authenticated) {
            wire::auth_key key;
            key.bytes.fill(7);
            ac.auth_key = key;
            bc.auth_key = key;
        }
        sender_state s;
        pipeline::engine a(ac);
        pipeline::engine b(bc);
        common::time_ns now = 1000 * us;
        for (std::uint32_t i = 0; i < frames_per_burst; ++i) {
            rte_mbuf* m = to_mbuf(frames.get(), data_frame(i));
            EXPECT_EQ(a.from_host(&m, 1, now), 1);
        }
        std::vector<rte_mbuf*> data;
        for (int step = 0; step < 1000 && data.size() < frames_per_burst; ++step, now += 100) {
            a.poll(now);
            for (rte_mbuf* m : take_fabric(a)) {
                const wire::parse_result r = wire::parse(m);
                if (lost.contains(r.packet.header.seq)) {
                    rte_pktmbuf_free(m);
                    lost.erase(r.packet.header.seq);
                    data.push_back(nullptr);
                } else {
                    data.push_back(m);
                }
            }
        }
        EXPECT_EQ(data.size(), frames_per_burst) << "the sender did not send the burst";
        std::erase(data, nullptr);
        now += 11 * us;
        b.from_fabric(data.data(), static_cast<std::uint16_t>(data.size()), now);
        free_all(take_host(b));
        std::vector<rte_mbuf*> answers = take_fabric(b);
        for (rte_mbuf* m : answers) {
            const wire::parse_result r = wire::parse(m);
            EXPECT_TRUE(r.ok());
            ++s.answer_packets[r.packet.header.type];
            s.answers[r.packet.header.type] += 1u + r.packet.header.run_entries;
        }
        now += 11 * us;
        a.from_fabric(answers.data(), static_cast<std::uint16_t>(answers.size()), now);
        free_all(take_fabric(a)); // resends of what the answers found lost
        s.counters = a.counters();
        s.receiver = b.counters();
        s.paths.assign(a.path_stats().begin(), a.path_stats().end());
        s.real = {a.paths().path(0).real(), a.paths().path(1).real()};
        a.for_each_flow(1, [&](const pipeline::engine::flow_view& v) {
            s.rate_bps = v.rate_bps;
            s.expected_bps = v.expected_bps;
            s.in_flight = v.in_flight;
            s.lost_pending = v.lost_pending;
        });
        return s;
    }
};

void expect_same_sender(const sender_state& per_packet, const sender_state& coalesced)
{
    const auto& p = per_packet.counters;
    const auto& c = coalesced.counters;
    EXPECT_EQ(c.ack_rx, p.ack_rx);
    EXPECT_EQ(c.data_acked, p.data_acked);
    EXPECT_EQ(c.loss_by_gap, p.loss_by_gap);
    EXPECT_EQ(c.aimd_increase, p.aimd_increase);
    EXPECT_EQ(c.aimd_hyper_increase, p.aimd_hyper_increase);
    EXPECT_EQ(c.aimd_decrease, p.aimd_decrease);
    EXPECT_EQ(c.data_resent, p.data_resent);
    for (std::size_t pid = 0; pid < 2; ++pid) {
        EXPECT_EQ(coalesced.paths[pid].latency_samples, per_packet.paths[pid].latency_samples) << pid;
        EXPECT_EQ(coalesced.paths[pid].latency_min_ns, per_packet.paths[pid].latency_min_ns) << pid;
        EXPECT_EQ(coalesced.paths[pid].losses, per_packet.paths[pid].losses) << pid;
        EXPECT_EQ(coalesced.real[pid], per_packet.real[pid]) << pid;
    }
    EXPECT_EQ(coalesced.rate_bps, per_packet.rate_bps);
    EXPECT_EQ(coalesced.expected_bps, per_packet.expected_bps);
    EXPECT_EQ(coalesced.in_flight, per_packet.in_flight);
    EXPECT_EQ(coalesced.lost_pending, per_packet.lost_pending);
}

} // namespace

// One burst of 32 DATA over two paths: two ACK_RUNs (one per path) carry
// all 32 answers, and the sender releases all 32 frames.
TEST_F(ack_run, OneBurstIsAnsweredByOneAckRunPerPath)
{
    const sender_state s = run("one", pipeline::ack_mode::coalesced);
    EXPECT_EQ(s.answer_packets.at(wire::packet_type::ack_run), 2u);
    EXPECT_FALSE(s.answer_packets.contains(wire::packet_type::ack));
    EXPECT_EQ(s.answers.at(wire::packet_type::ack_run), frames_per_burst);
    EXPECT_EQ(s.receiver.ack_sent, frames_per_burst);
    EXPECT_EQ(s.receiver.ack_coalesced_sent, 2u);
    EXPECT_EQ(s.counters.ack_coalesced_rx, 2u);
    EXPECT_EQ(s.counters.ack_rx, frames_per_burst);
    EXPECT_EQ(s.counters.data_acked, frames_per_burst);
    EXPECT_EQ(s.counters.loss_by_gap, 0u);
    EXPECT_EQ(s.in_flight, 0u);
    // Both paths carried some of the burst (Eq. 1 sprays it), and each
    // path's every DATA gave a latency sample.
    EXPECT_GT(s.paths[0].latency_samples, 0u);
    EXPECT_GT(s.paths[1].latency_samples, 0u);
    EXPECT_EQ(s.paths[0].latency_samples + s.paths[1].latency_samples, frames_per_burst);
}

// §III-E..G: the sender ends in the same state, sample for sample, whether
// the receiver answered each DATA alone or coalesced.
TEST_F(ack_run, TheSenderTakesWhatItTakesFromAsManyAcks)
{
    const sender_state per_packet = run("same_p", pipeline::ack_mode::per_packet);
    const sender_state coalesced = run("same_c", pipeline::ack_mode::coalesced);
    EXPECT_EQ(per_packet.answer_packets.at(wire::packet_type::ack), frames_per_burst);
    EXPECT_EQ(per_packet.counters.ack_coalesced_rx, 0u);
    EXPECT_GT(coalesced.counters.ack_coalesced_rx, 0u);
    expect_same_sender(per_packet, coalesced);
}

// Alg. 3 under coalescing: DATA lost in the middle of a path's run are
// found lost by the answers after them on that path, as with per-packet
// ACKs, and resent.
TEST_F(ack_run, LossesInsideARunAreFoundByTheAnswersAfterThem)
{
    const std::set<std::uint32_t> lost{5, 6, 17};
    const sender_state per_packet = run("loss_p", pipeline::ack_mode::per_packet, lost);
    const sender_state coalesced = run("loss_c", pipeline::ack_mode::coalesced, lost);
    EXPECT_EQ(per_packet.counters.loss_by_gap, lost.size());
    EXPECT_EQ(coalesced.counters.data_acked, frames_per_burst - lost.size());
    EXPECT_GT(coalesced.counters.data_resent, 0u);
    expect_same_sender(per_packet, coalesced);
}

// With a fabric key the tag covers the run block: every ACK_RUN verifies and is taken.
TEST_F(ack_run, SignedAckRunsVerify)
{
    const sender_state s = run("signed", pipeline::ack_mode::coalesced, {}, true);
    EXPECT_EQ(s.counters.fabric_drop_unauthenticated, 0u);
    EXPECT_EQ(s.counters.ack_coalesced_rx, 2u);
    EXPECT_EQ(s.counters.data_acked, frames_per_burst);
}

// A control pool too small for long runs ends runs at what fits: more
// ACK_RUNs, every DATA still answered.
TEST_F(ack_run, ASmallControlPoolShortensRunsAndLosesNoAnswer)
{
    control = make_pool("ar_small_control", 1024, wire::header_mbuf_data_room);
    const sender_state s = run("small", pipeline::ack_mode::coalesced);
    EXPECT_GT(s.receiver.ack_coalesced_sent, 2u);
    EXPECT_EQ(s.receiver.ack_sent, frames_per_burst);
    EXPECT_EQ(s.receiver.ack_drop_no_mbuf, 0u);
    EXPECT_EQ(s.counters.data_acked, frames_per_burst);
}
