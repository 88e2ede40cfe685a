// docs/pipeline.md "Receiver guarantees": a restarted sender's
// frames are delivered, not mistaken for duplicates; ACKs and PROBE_ACKs that
// do not answer something this engine sent change nothing; an attacker
// cannot make a receiver hold every mbuf; a gap is given up after the
// reorder timeout.
#include "harness.hpp"

#include "wire/bytes.hpp"
#include "wire/layout.hpp"
#include "wire/time48.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace laps;
using namespace laps::test;

namespace {

constexpr std::size_t laps_at = wire::outer_off::laps;

struct trust : ::testing::Test {
    pool_ptr frames = make_pool("trust_frames", 2047);
    pool_ptr control = make_pool("trust_control", 2047, wire::header_mbuf_data_room);
    common::time_ns now = 1'000'000;
    std::vector<std::uint32_t> delivered; // frame ids B handed to its host

    pipeline::engine_config sender(const std::string& name, std::uint32_t epoch)
    {
        return one_path_sender_config(name, control.get(), epoch);
    }

    pipeline::engine_config receiver(const std::string& name) { return in_order_receiver_config(name, control.get()); }

    void TearDown() override
    {
        EXPECT_EQ(in_use(frames.get()), 0u);
        EXPECT_EQ(in_use(control.get()), 0u);
    }

    // Moves A's output to B and B's ACKs back until nothing moves.
    void exchange(pipeline::engine& a, pipeline::engine& b)
    {
        for (int round = 0; round < 64; ++round, now += 1'000) {
            a.poll(now);
            auto out = take_fabric(a);
            b.from_fabric(out.data(), static_cast<std::uint16_t>(out.size()), now);
            for (auto* m : take_host(b)) {
                delivered.push_back(frame_id(from_mbuf(m)));
                rte_pktmbuf_free(m);
            }
            auto acks = take_fabric(b);
            a.from_fabric(acks.data(), static_cast<std::uint16_t>(acks.size()), now);
            if (out.empty() && acks.empty()) {
                return;
            }
        }
    }

    void send(pipeline::engine& a, pipeline::engine& b, std::uint32_t first_id, std::uint32_t count)
    {
        for (std::uint32_t id = first_id; id < first_id + count; ++id) {
            rte_mbuf* m = to_mbuf(frames.get(), data_frame(id, 200));
            ASSERT_EQ(a.from_host(&m, 1, now), 1);
            exchange(a, b);
        }
    }

    // A genuine ACK from B for A's next DATA packet (the packet is delivered).
    bytes genuine_ack(pipeline::engine& a, pipeline::engine& b, std::uint32_t id)
    {
        rte_mbuf* m = to_mbuf(frames.get(), data_frame(id, 200));
        EXPECT_EQ(a.from_host(&m, 1, now), 1);
        a.poll(now);
        auto out = take_fabric(a);
        EXPECT_EQ(out.size(), 1u);
        b.from_fabric(out.data(), static_cast<std::uint16_t>(out.size()), now);
        free_all(take_host(b));
        auto acks = take_fabric(b);
        EXPECT_EQ(acks.size(), 1u);
        bytes ack = from_mbuf(acks[0]);
        free_all(acks);
        return ack;
    }

    // A genuine DATA packet of an attacker engine (epoch 9), to renumber.
    bytes attacker_template(const std::string& name)
    {
        pipeline::engine attacker(sender(name, 9));
        rte_mbuf* m = to_mbuf(frames.get(), data_frame(7, 200));
        EXPECT_EQ(attacker.from_host(&m, 1, now), 1);
        attacker.poll(now);
        auto tmpl = take_fabric(attacker);
        EXPECT_EQ(tmpl.size(), 1u);
        const bytes data = tmpl.empty() ? bytes{} : from_mbuf(tmpl[0]);
        free_all(tmpl);
        attacker.release_all();
        return data;
    }

    // The template as the one packet of flow `flow`, behind a gap: sequence
    // 1 whose sequence 0 never comes, so the receiver holds it for order.
    static bytes forged_behind_gap(const bytes& data, std::uint32_t flow)
    {
        bytes f = data;
        wire::store_be32(f.data() + laps_at + wire::laps_off::flow_id, flow);
        wire::store_be32(f.data() + laps_at + wire::laps_off::seq, 1);
        wire::store_be16(f.data() + laps_at + wire::laps_off::window_offset, 1);
        return f;
    }

    void feed(pipeline::engine& e, const bytes& packet) { test::feed(frames.get(), e, packet, now); }
};

} // namespace

// A new laps process numbers its flows from the same ids and sequence 0,
// with a new random epoch: the receiver keys flows by (sender, flow_id,
// epoch), so the restarted run's flows are new flows, not duplicates.
TEST_F(trust, RestartedSenderIsDeliveredNotTakenForDuplicates)
{
    pipeline::engine b(receiver("trust_b1"));
    {
        pipeline::engine first(sender("trust_a1", 100));
        send(first, b, 0, 100);
    }
    pipeline::engine restarted(sender("trust_a2", 101));
    send(restarted, b, 1000, 20);

    const auto& c = b.counters();
    EXPECT_EQ(c.data_delivered, 120u);
    EXPECT_EQ(c.data_drop_duplicate, 0u);
    EXPECT_EQ(c.receiver_flow_created, 2u) << "one flow per incarnation";
    ASSERT_EQ(delivered.size(), 120u);
    for (std::uint32_t i = 0; i < 20; ++i) {
        EXPECT_EQ(delivered[100 + i], 1000 + i) << "the restarted run's frames, in order";
    }
    EXPECT_EQ(restarted.counters().data_acked, 20u) << "and the new sender hears of each";
}

// ACKs for flows that do not exist, of another epoch, for sequence
// numbers never sent, and PROBE_ACKs with probing off leave the PIT as it
// was, whatever latency they claim.
TEST_F(trust, ForgedAcksLeaveThePitUnchanged)
{
    pipeline::engine a(sender("trust_a5", 7));
    pipeline::engine b(receiver("trust_b3"));
    const bytes ack = genuine_ack(a, b, 1);
    feed(a, ack);
    const auto real = a.paths().path(5).real();
    const auto measured_at = a.paths().path(5).time();
    const auto before = a.counters();

    auto forged = [&](auto edit) {
        bytes f = ack;
        edit(f.data() + laps_at);
        return f;
    };
    for (const std::int64_t latency : {-(std::int64_t{1} << 47), std::int64_t{10'000}, std::int64_t{15'000}}) {
        const auto claim = wire::latency_to_time48(latency);
        feed(a, forged([&](std::uint8_t* h) {
                 wire::store_be48(h + wire::laps_off::time, claim);
                 wire::store_be32(h + wire::laps_off::flow_id, 0x00abcdef);
             }));
        feed(a, forged([&](std::uint8_t* h) {
                 wire::store_be48(h + wire::laps_off::time, claim);
                 wire::store_be32(h + wire::laps_off::epoch, 8);
             }));
        feed(a, forged([&](std::uint8_t* h) {
                 wire::store_be48(h + wire::laps_off::time, claim);
                 wire::store_be32(h + wire::laps_off::seq, 5000);
             }));
        feed(a, forged([&](std::uint8_t* h) {
                 wire::store_be48(h + wire::laps_off::time, claim);
                 h[wire::laps_off::version_type] = static_cast<std::uint8_t>((wire::laps_version << 4) | 4);
             }));
    }
    EXPECT_EQ(a.paths().path(5).real(), real);
    EXPECT_EQ(a.paths().path(5).time(), measured_at);
    const auto& after = a.counters();
    EXPECT_EQ(after.ack_drop_unknown_flow - before.ack_drop_unknown_flow, 3u);
    EXPECT_EQ(after.ack_drop_stale_epoch - before.ack_drop_stale_epoch, 3u);
    EXPECT_EQ(after.ack_unknown_seq - before.ack_unknown_seq, 3u);
    EXPECT_EQ(after.probe_ack_drop_unexpected - before.probe_ack_drop_unexpected, 3u);
    EXPECT_EQ(after.aimd_decrease, before.aimd_decrease);
}

// A genuine ACK whose latency is beyond max_latency (a forged or broken
// clock) is counted and changes no entry.
TEST_F(trust, ImplausibleLatencyIsCountedNotRecorded)
{
    auto ac = sender("trust_a6", 7);
    ac.max_latency_ns = common::ns_per_ms;
    pipeline::engine a(ac);
    pipeline::engine b(receiver("trust_b4"));
    feed(a, genuine_ack(a, b, 1));
    const auto real = a.paths().path(5).real();
    bytes ack = genuine_ack(a, b, 2);
    wire::store_be48(ack.data() + laps_at + wire::laps_off::time, wire::latency_to_time48(5 * common::ns_per_ms));
    feed(a, ack);
    EXPECT_EQ(a.counters().ack_drop_implausible_latency, 1u);
    EXPECT_EQ(a.paths().path(5).real(), real);
}

// 3,000 forged DATA packets, one per flow, each behind a gap, then
// 500 legitimate in-order packets, with a 2,047-mbuf pool: holding for order
// stays under its cap, the pool is never exhausted, and every legitimate
// frame is delivered in order.
TEST_F(trust, HoldAttackLeavesLegitimateTrafficDelivered)
{
    auto bc = receiver("trust_b5");
    bc.reorder_hold_max = 256;
    pipeline::engine b(bc);
    pipeline::engine a(sender("trust_a7", 3));
    const bytes data = attacker_template("trust_x");
    ASSERT_FALSE(data.empty());
    for (std::uint32_t flow = 0; flow < 3000; ++flow) {
        feed(b, forged_behind_gap(data, 0x00100000u + flow));
        ASSERT_LE(b.reorder_held(), 257u);
        ASSERT_LT(in_use(frames.get()), 1024u) << "the attack must not take the pool";
    }
    EXPECT_GT(b.counters().reorder_hold_limit, 0u);
    delivered.clear();
    send(a, b, 0, 500);
    ASSERT_EQ(delivered.size(), 500u);
    for (std::uint32_t i = 0; i < 500; ++i) {
        ASSERT_EQ(delivered[i], i);
    }
    b.release_all();
}

// a gap that is never filled is given up after reorder_timeout: the
// held frames go to the host (deliver) and are counted.
TEST_F(trust, AGapIsGivenUpAfterTheReorderTimeout)
{
    auto bc = receiver("trust_b6");
    bc.reorder_timeout_ns = 2 * common::ns_per_ms;
    pipeline::engine b(bc);
    pipeline::engine a(sender("trust_a8", 4));
    for (std::uint32_t id = 0; id < 4; ++id) {
        rte_mbuf* m = to_mbuf(frames.get(), data_frame(id, 200));
        ASSERT_EQ(a.from_host(&m, 1, now), 1);
    }
    a.poll(now);
    auto out = take_fabric(a);
    ASSERT_EQ(out.size(), 4u);
    rte_pktmbuf_free(out[0]); // lost on the wire, never resent here
    b.from_fabric(out.data() + 1, 3, now);
    free_all(take_fabric(b));
    EXPECT_EQ(b.pending_to_host(), 0u) << "held behind the gap";
    EXPECT_EQ(b.reorder_held(), 3u);
    b.poll(now + common::ns_per_ms);
    EXPECT_EQ(b.pending_to_host(), 0u) << "not yet";
    b.poll(now + 3 * common::ns_per_ms);
    auto host = take_host(b);
    ASSERT_EQ(host.size(), 3u);
    EXPECT_EQ(frame_id(from_mbuf(host[0])), 1u);
    free_all(host);
    EXPECT_EQ(b.counters().reorder_timeout, 1u);
    EXPECT_EQ(b.reorder_held(), 0u);
    a.release_all();
}

// a receive table full of flows that hold frames (forged, or a
// sender that went quiet) does not keep a new flow out for long: once they
// have been quiet for flow_idle, a new flow takes the slot of the
// longest-quiet one, whose held frames go to the host in sequence.
TEST_F(trust, AFullReceiveTableMakesRoomForANewFlow)
{
    auto bc = receiver("trust_b7");
    bc.algo.tables.flow_capacity = 64;
    bc.reorder_timeout_ns = common::ns_per_s; // the squatters keep holding
    pipeline::engine b(bc);
    pipeline::engine a(sender("trust_a9", 5));
    const bytes data = attacker_template("trust_x2");
    ASSERT_FALSE(data.empty());
    std::uint32_t squatters = 0;
    for (std::uint32_t flow = 0; flow < 200 && b.counters().data_drop_flow_table_full == 0; ++flow) {
        feed(b, forged_behind_gap(data, 0x00200000u + flow));
        squatters = b.active_receive_flows();
    }
    ASSERT_GT(b.counters().data_drop_flow_table_full, 0u) << "the table must fill";
    const std::uint64_t held = b.reorder_held();
    EXPECT_EQ(held, squatters);

    // Still fresh: a new flow finds no room (its DATA is dropped unACKed, the
    // sender will resend it).
    pipeline::engine early(sender("trust_a10", 6));
    rte_mbuf* first = to_mbuf(frames.get(), data_frame(1000, 200));
    ASSERT_EQ(early.from_host(&first, 1, now), 1);
    early.poll(now);
    auto out = take_fabric(early);
    ASSERT_EQ(out.size(), 1u);
    const std::uint64_t full_before = b.counters().data_drop_flow_table_full;
    b.from_fabric(out.data(), 1, now);
    EXPECT_EQ(b.counters().data_drop_flow_table_full, full_before + 1);
    EXPECT_EQ(b.counters().receiver_flow_evicted_pressure, 0u);
    EXPECT_TRUE(take_fabric(b).empty()) << "no ACK for a frame that was not taken";
    early.release_all();

    // After flow_idle of quiet the squatters give way.
    now += bc.flow_idle_ns + common::ns_per_ms;
    delivered.clear();
    send(a, b, 2000, 50);
    EXPECT_EQ(b.counters().receiver_flow_evicted_pressure, 1u);
    std::vector<std::uint32_t> legitimate;
    std::copy_if(delivered.begin(), delivered.end(), std::back_inserter(legitimate),
                 [](std::uint32_t id) { return id >= 2000; });
    ASSERT_EQ(legitimate.size(), 50u);
    for (std::uint32_t i = 0; i < 50; ++i) {
        ASSERT_EQ(legitimate[i], 2000 + i);
    }
    EXPECT_EQ(delivered.size() - legitimate.size(), 1u) << "the evicted squatter's held frame goes to the host";
    EXPECT_EQ(b.reorder_held(), held - 1);
    b.release_all();
}
