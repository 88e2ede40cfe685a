// Authenticated fabrics (docs/security.md): with a key, keyed engines
// exchange traffic as before, and every forged packet of the hostile-fabric
// attacks (engine_hostile_test.cpp) is dropped as unauthenticated before it
// can change anything, while replays of genuine packets are dropped as
// replayed.
#include "harness.hpp"

#include "wire/bytes.hpp"
#include "wire/layout.hpp"
#include "wire/time48.hpp"

#include <gtest/gtest.h>

using namespace laps;
using namespace laps::test;

namespace {

constexpr std::size_t laps_at = wire::outer_off::laps;
constexpr common::time_ns us = 1'000;

wire::auth_key fabric_key()
{
    return wire::parse_auth_key("6c6170732d746573742d6b65792d3031");
}

struct auth : ::testing::Test {
    pool_ptr frames = make_pool("auth_frames", 4095);
    pool_ptr control = make_pool("auth_control", 2047, wire::header_mbuf_data_room);
    common::time_ns now = 1'000'000;
    std::vector<bytes> data_seen; // DATA as it left a
    std::vector<bytes> acks_seen; // ACKs as they left b

    pipeline::engine_config sender(const std::string& name, std::optional<wire::auth_key> key = fabric_key())
    {
        auto c = host_config(name, 1, control.get());
        c.algo.paths.pit = {path_row(5, 10 * us, {0x0a000101})};
        c.algo.paths.pst = {{tables::address::ipv4(0x0a000002), {5}}};
        c.epoch = 0x11111111;
        c.algo.selection.probing = false;
        c.auth_key = key;
        return c;
    }

    pipeline::engine_config receiver(const std::string& name, std::optional<wire::auth_key> key = fabric_key())
    {
        auto c = host_config(name, 2, control.get());
        c.in_order = true;
        c.epoch = 0x22222222;
        c.auth_key = key;
        return c;
    }

    void TearDown() override
    {
        EXPECT_EQ(in_use(frames.get()), 0u);
        EXPECT_EQ(in_use(control.get()), 0u);
    }

    // One frame a -> b and its ACK back; returns the ids b delivered.
    std::vector<std::uint32_t> round_trip(pipeline::engine& a, pipeline::engine& b, std::uint32_t id)
    {
        std::vector<std::uint32_t> delivered;
        rte_mbuf* m = to_mbuf(frames.get(), data_frame(id, 200));
        EXPECT_EQ(a.from_host(&m, 1, now), 1);
        auto out = take_fabric(a);
        for (rte_mbuf* d : out) {
            data_seen.push_back(from_mbuf(d));
        }
        now += 5 * us;
        b.from_fabric(out.data(), static_cast<std::uint16_t>(out.size()), now);
        const auto ids = host_frame_ids(b);
        delivered.insert(delivered.end(), ids.begin(), ids.end());
        auto acks = take_fabric(b);
        for (rte_mbuf* k : acks) {
            acks_seen.push_back(from_mbuf(k));
        }
        now += 5 * us;
        a.from_fabric(acks.data(), static_cast<std::uint16_t>(acks.size()), now);
        now += 20 * us;
        return delivered;
    }

    void feed(pipeline::engine& e, const bytes& packet) { test::feed(frames.get(), e, packet, now); }
};

} // namespace

TEST_F(auth, KeyedEnginesExchangeTrafficAsBefore)
{
    pipeline::engine a(sender("auth_a1"));
    pipeline::engine b(receiver("auth_b1"));
    for (std::uint32_t id = 0; id < 50; ++id) {
        EXPECT_EQ(round_trip(a, b, id), std::vector<std::uint32_t>{id});
    }
    EXPECT_EQ(a.counters().data_acked, 50u);
    EXPECT_EQ(b.counters().fabric_drop_unauthenticated, 0u);
    EXPECT_EQ(a.counters().fabric_drop_unauthenticated, 0u);
    ASSERT_FALSE(data_seen.empty());
    const auto r = wire::parse(data_seen[0]);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r.packet.authenticated()) << "DATA carry the trailer";
    {
        const auto q = wire::parse(acks_seen[0]);
        fprintf(stderr, "err %s size %zu flags %02x\n", std::string(wire::to_string(q.error)).c_str(), acks_seen[0].size(), acks_seen[0][43]);
    }
    EXPECT_TRUE(wire::parse(acks_seen[0]).packet.authenticated()) << "and so do ACKs";
    EXPECT_EQ(data_seen[0].size(), wire::outer_size + wire::laps_size(1) + wire::auth_size + data_frame(0, 200).size());
}

// The hostile-fabric forgeries, each made from a genuine packet by editing
// fields (a forger without the key cannot make the tag): every one is
// dropped as unauthenticated and nothing changes.
TEST_F(auth, EveryForgedPacketIsDroppedAsUnauthenticated)
{
    auto ac = sender("auth_a2");
    ac.algo.tables.estimate_clock_offset = true;
    pipeline::engine a(ac);
    pipeline::engine b(receiver("auth_b2"));
    for (std::uint32_t id = 0; id < 10; ++id) {
        round_trip(a, b, id);
    }
    const auto real = a.paths().path(5).real();
    const auto a_before = a.counters();
    const auto b_before = b.counters();

    std::uint64_t forged_to_a = 0;
    std::uint64_t forged_to_b = 0;
    // ACKs: duplicates with +50 ms, wrap-around sequences, another flow.
    for (std::size_t i = 0; i < 5; ++i) {
        bytes f = acks_seen[i];
        const auto latency = wire::sign_extend48(wire::load_be48(f.data() + laps_at + wire::laps_off::time));
        wire::store_be48(f.data() + laps_at + wire::laps_off::time, wire::latency_to_time48(latency + 50'000'000));
        feed(a, f);
        ++forged_to_a;
    }
    for (const std::uint32_t seq : {0xffffffffu, 0x80000000u, 10u}) {
        bytes f = acks_seen[0];
        wire::store_be32(f.data() + laps_at + wire::laps_off::seq, seq);
        feed(a, f);
        ++forged_to_a;
    }
    // DATA: other epochs, window_offset 0xffff, a forged frame in the live flow.
    for (const std::uint32_t epoch : {0x11111111u, 0x91111111u, 0u}) {
        bytes f = data_seen.back();
        wire::store_be32(f.data() + laps_at + wire::laps_off::epoch, epoch);
        wire::store_be32(f.data() + laps_at + wire::laps_off::seq, 10);
        wire::store_be16(f.data() + laps_at + wire::laps_off::window_offset, 0xffff);
        feed(b, f);
        ++forged_to_b;
    }
    // An unsigned packet (a sender without the key).
    {
        pipeline::engine plain(sender("auth_x2", std::nullopt));
        rte_mbuf* m = to_mbuf(frames.get(), data_frame(77, 200));
        ASSERT_EQ(plain.from_host(&m, 1, now), 1);
        auto out = take_fabric(plain);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_FALSE(wire::parse(out[0]).packet.authenticated());
        b.from_fabric(out.data(), 1, now);
        ++forged_to_b;
        free_all(take_host(b));
        free_all(take_fabric(b));
        plain.release_all();
    }
    EXPECT_EQ(a.counters().fabric_drop_unauthenticated - a_before.fabric_drop_unauthenticated, forged_to_a);
    EXPECT_EQ(b.counters().fabric_drop_unauthenticated - b_before.fabric_drop_unauthenticated, forged_to_b);
    EXPECT_EQ(a.counters().ack_rx, a_before.ack_rx) << "not one reached the ACK path";
    EXPECT_EQ(b.counters().data_rx, b_before.data_rx) << "not one reached the DATA path";
    EXPECT_EQ(a.paths().path(5).real(), real);
    // And traffic goes on.
    for (std::uint32_t id = 10; id < 20; ++id) {
        EXPECT_EQ(round_trip(a, b, id), std::vector<std::uint32_t>{id});
    }
}

// Genuine packets played again: a DATA delivered once, an ACK taken once,
// also after its flow is long forgotten at the receiver.
TEST_F(auth, ReplaysAreDroppedAsReplayed)
{
    pipeline::engine a(sender("auth_a3"));
    auto bc = receiver("auth_b3");
    bc.flow_idle_ns = common::ns_per_ms;
    pipeline::engine b(bc);
    for (std::uint32_t id = 0; id < 5; ++id) {
        round_trip(a, b, id);
    }
    const auto delivered = b.counters().data_delivered;
    for (const bytes& d : data_seen) {
        feed(b, d);
    }
    for (const bytes& k : acks_seen) {
        feed(a, k);
    }
    EXPECT_EQ(b.counters().fabric_drop_replayed, data_seen.size());
    EXPECT_EQ(a.counters().fabric_drop_replayed, acks_seen.size());
    EXPECT_EQ(b.counters().data_delivered, delivered);
    // The receiver forgets the flow (4 x flow_idle of quiet); the replay
    // window of its sender is still there.
    for (int i = 0; i < 2000; ++i, now += 10 * us) {
        b.poll(now);
    }
    ASSERT_EQ(b.active_receive_flows(), 0u);
    feed(b, data_seen.front());
    EXPECT_EQ(b.counters().fabric_drop_replayed, data_seen.size() + 1);
    EXPECT_EQ(b.counters().data_delivered, delivered);
}

// The tag covers the addresses: a genuine packet sent again from another
// source address is not accepted (and cannot open a flow of its own).
TEST_F(auth, APacketMovedToAnotherSourceAddressFails)
{
    pipeline::engine a(sender("auth_a4"));
    pipeline::engine b(receiver("auth_b4"));
    round_trip(a, b, 0);
    bytes moved = data_seen.front();
    wire::store_be32(moved.data() + wire::outer_off::ip_src, 0x0a0000ee);
    // The IPv4 checksum is not the parser's business here (laps does not check it).
    feed(b, moved);
    EXPECT_EQ(b.counters().fabric_drop_unauthenticated, 1u);
    EXPECT_EQ(b.counters().receiver_flow_created, 1u);
}
