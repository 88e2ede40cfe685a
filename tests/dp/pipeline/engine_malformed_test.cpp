// Every class of malformed input is dropped and counted by reason, with no
// crash and no mbuf leak (docs/design.md §4: "never trusted").
#include "harness.hpp"

#include <gtest/gtest.h>

using namespace laps;
using namespace laps::test;

namespace {

struct malformed : ::testing::Test {
    pool_ptr frames = make_pool("bad_frames", 512);
    pool_ptr control = make_pool("bad_control", 512, wire::header_mbuf_data_room);

    std::unique_ptr<pipeline::engine> a;
    std::unique_ptr<pipeline::engine> b;
    bytes data_packet; // a valid DATA packet from A to B
    bytes ack_packet;  // B's valid ACK for it

    void SetUp() override
    {
        auto ac = host_config("bad_a", 1, control.get());
        ac.algo.paths.pit = {path_row(5, 10'000, {100, 200})};
        ac.algo.paths.pst = {{tables::address::ipv4(0x0a000002), {5}}};
        a = std::make_unique<pipeline::engine>(ac);
        b = std::make_unique<pipeline::engine>(host_config("bad_b", 2, control.get()));

        rte_mbuf* m = to_mbuf(frames.get(), data_frame(1, 100));
        ASSERT_EQ(a->from_host(&m, 1, 1000), 1);
        auto out = take_fabric(*a);
        ASSERT_EQ(out.size(), 1u);
        data_packet = from_mbuf(out[0]);
        b->from_fabric(out.data(), 1, 2000);
        free_all(take_host(*b));
        auto acks = take_fabric(*b);
        ASSERT_EQ(acks.size(), 1u);
        ack_packet = from_mbuf(acks[0]);
        free_all(acks);
    }

    void TearDown() override
    {
        a.reset();
        b.reset();
        EXPECT_EQ(in_use(frames.get()), 0u);
        EXPECT_EQ(in_use(control.get()), 0u);
    }

    void feed(pipeline::engine& e, const bytes& packet, common::time_ns now = 3000)
    {
        rte_mbuf* m = to_mbuf(frames.get(), packet);
        ASSERT_NE(m, nullptr);
        e.from_fabric(&m, 1, now);
    }

    std::uint64_t parse_error(const pipeline::engine& e, wire::parse_error reason)
    {
        return e.parse_errors()[static_cast<std::size_t>(reason)];
    }
};

} // namespace

TEST_F(malformed, TruncatedAtEveryLengthIsDroppedAndCounted)
{
    const auto before = b->counters();
    for (std::size_t len = 0; len < data_packet.size(); ++len) {
        feed(*b, bytes(data_packet.begin(), data_packet.begin() + static_cast<std::ptrdiff_t>(len)));
    }
    const auto& after = b->counters();
    EXPECT_EQ(after.fabric_drop_malformed - before.fabric_drop_malformed, data_packet.size());
    EXPECT_EQ(after.data_rx, before.data_rx);
    EXPECT_EQ(after.ack_sent, before.ack_sent);
    EXPECT_EQ(b->pending_to_host(), 0u);
    EXPECT_EQ(b->pending_to_fabric(), 0u);
    EXPECT_GT(parse_error(*b, wire::parse_error::truncated_ethernet), 0u);
    EXPECT_GT(parse_error(*b, wire::parse_error::truncated_ipv4), 0u);
}

TEST_F(malformed, WrongVersionTooManyAnchorsAndBadAnchorIndex)
{
    bytes p = data_packet;
    p[42] = 0x11; // version 1: not understood by version 2
    feed(*b, p);
    EXPECT_EQ(parse_error(*b, wire::parse_error::bad_version), 1u);

    p = data_packet;
    p[42] = 0x27; // type 7
    feed(*b, p);
    EXPECT_EQ(parse_error(*b, wire::parse_error::bad_type), 1u);

    p = data_packet;
    p[44] = 5; // anchor_count over 4
    feed(*b, p);
    EXPECT_EQ(parse_error(*b, wire::parse_error::too_many_anchors), 1u);

    p = data_packet;
    p[45] = 3; // anchor_index past anchor_count 2
    feed(*b, p);
    EXPECT_EQ(parse_error(*b, wire::parse_error::bad_anchor_index), 1u);

    EXPECT_EQ(b->counters().fabric_drop_malformed, 4u);
    EXPECT_EQ(b->pending_to_host(), 0u);
}

TEST_F(malformed, AckWithPidOutOfRangeOrWithoutPitRow)
{
    bytes p = ack_packet;
    p[46] = 0x01; // pid 0x0105 = 261 >= PIT capacity 256
    feed(*a, p);
    EXPECT_EQ(parse_error(*a, wire::parse_error::pid_out_of_range), 1u);

    p = ack_packet;
    p[47] = 7; // pid 7: in range, no PIT row
    feed(*a, p);
    EXPECT_EQ(a->counters().ack_drop_unknown_pid, 1u);
}

TEST_F(malformed, AckForAnUnknownFlowOrSeqIsCountedAndChangesNothing)
{
    bytes p = ack_packet;
    p[57] ^= 0x01; // flow_id (bytes 54-57), low byte: another slot
    feed(*a, p);
    EXPECT_EQ(a->counters().ack_drop_unknown_flow, 1u);

    p = ack_packet;
    p[55] |= 0x10; // flow_id bit 20, a generation bit: an older flow of this slot
    feed(*a, p);
    EXPECT_EQ(a->counters().ack_drop_unknown_flow, 2u);

    p = ack_packet;
    p[61] = 99; // seq 99: never sent
    feed(*a, p);
    EXPECT_EQ(a->counters().ack_unknown_seq, 1u);

    // The real ACK still releases the packet afterwards.
    feed(*a, ack_packet);
    EXPECT_EQ(a->counters().ack_rx, 4u);
    EXPECT_EQ(a->counters().loss_by_gap, 0u);
}

TEST_F(malformed, ForeignPacketsOnTheFabricGoToTheHostUnchanged)
{
    const bytes foreign = packet_builder().eth(mac_of(2), mac_of(9)).ipv4("10.0.0.9", "10.0.0.2").udp(1, 53).build();
    feed(*b, foreign);
    EXPECT_EQ(b->counters().fabric_passthrough_foreign, 1u);
    auto out = take_host(*b);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(from_mbuf(out[0]), foreign);
    free_all(out);
}

TEST_F(malformed, DuplicateDataIsAckedAndDropped)
{
    feed(*b, data_packet);
    EXPECT_EQ(b->counters().data_drop_duplicate, 1u);
    EXPECT_EQ(b->counters().ack_sent, 2u);
    EXPECT_EQ(b->pending_to_host(), 0u);
    free_all(take_fabric(*b));
}
