// The engine on crafted packets (issue: wire format and pipeline engine):
// golden bytes of a DATA packet, its ACK, decapsulation, and the ACK's
// effect at the sender.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

using namespace laps;
using namespace laps::test;

namespace {

std::string hex(const bytes& b, std::size_t from, std::size_t to)
{
    std::string s;
    char buf[4];
    for (std::size_t i = from; i < to && i < b.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%02x", b[i]);
        s += buf;
    }
    return s;
}

struct golden : ::testing::Test {
    pool_ptr frames = make_pool("golden_frames", 256);
    pool_ptr control = make_pool("golden_control", 256, wire::header_mbuf_data_room);

    pipeline::engine_config sender_config()
    {
        auto c = host_config("golden_a", 1, control.get());
        c.algo.paths.pit = {path_row(5, 10'000, {100, 200})};
        c.algo.paths.pst = {{tables::address::ipv4(0x0a000002), {5}}};
        return c;
    }

    void TearDown() override
    {
        EXPECT_EQ(in_use(frames.get()), 0u);
        EXPECT_EQ(in_use(control.get()), 0u);
    }
};

} // namespace

TEST_F(golden, HostFrameBecomesExactlyTheExpectedLapsPacket)
{
    pipeline::engine a(sender_config());
    const bytes frame = packet_builder()
                            .eth(mac_of(2), mac_of(1))
                            .ipv4("10.0.0.1", "10.0.0.2")
                            .udp(1000, 5000)
                            .payload("golden")
                            .build();
    rte_mbuf* m = to_mbuf(frames.get(), frame);
    ASSERT_EQ(a.from_host(&m, 1, 5000), 1);
    auto out = take_fabric(a);
    ASSERT_EQ(out.size(), 1u);
    const bytes packet = from_mbuf(out[0]);
    ASSERT_EQ(packet.size(), 42 + 36 + frame.size());

    // Ethernet: next hop, own MAC, IPv4.
    EXPECT_EQ(hex(packet, 0, 14), "0200000000fe" "020000000001" "0800");
    // IPv4: v4 IHL 5, DSCP 0 ECT(0), length 20+8+36+48=112, id 0, DF, TTL 64,
    // UDP, checksum, 10.0.0.1 -> 10.0.0.2.
    EXPECT_EQ(hex(packet, 14, 24), "4502" "0070" "0000" "4000" "40" "11");
    EXPECT_EQ(hex(packet, 26, 34), "0a000001" "0a000002");
    // UDP: source 0xC000 | entropy, destination 19521 (0x4c41), length 92, checksum 0.
    EXPECT_EQ(packet[34] & 0xc0, 0xc0);
    EXPECT_EQ(hex(packet, 36, 42), "4c41" "005c" "0000");
    // LAPS: version 2 | type DATA (1), no flags, 2 anchors, index 0, pid 5, time 5000 ns,
    // flow_id (slot 0, generation 0), seq 0, inner length 48, window offset 0,
    // epoch 1 (the engine's default), anchors 100, 200.
    EXPECT_EQ(hex(packet, 42, 78), "21" "00" "02" "00" "0005" "000000001388" "00000000" "00000000" "0030" "0000"
                                   "00000001" "00000064" "000000c8");
    // The host frame, untouched.
    EXPECT_EQ(bytes(packet.begin() + 78, packet.end()), frame);
    // And the IPv4 header checksum verifies.
    std::uint32_t sum = 0;
    for (std::size_t i = 14; i < 34; i += 2) {
        sum += (std::uint32_t{packet[i]} << 8) | packet[i + 1];
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    EXPECT_EQ(sum, 0xffffu);
    free_all(out);
}

TEST_F(golden, AckCarriesLatencyAndReversedAnchorsAndTheHostGetsTheOriginalFrame)
{
    pipeline::engine a(sender_config());
    auto rc = host_config("golden_b", 2, control.get());
    pipeline::engine b(rc);

    const bytes frame = data_frame(7, 200);
    rte_mbuf* m = to_mbuf(frames.get(), frame);
    ASSERT_EQ(a.from_host(&m, 1, 5000), 1);
    auto data = take_fabric(a);
    ASSERT_EQ(data.size(), 1u);
    const auto parsed_data = wire::parse(data[0]);
    ASSERT_TRUE(parsed_data.ok());

    // B's clock reads 12000 when the packet arrives: 7000 ns one way.
    b.from_fabric(data.data(), 1, 12'000);
    auto to_host = take_host(b);
    ASSERT_EQ(to_host.size(), 1u);
    EXPECT_EQ(from_mbuf(to_host[0]), frame);
    free_all(to_host); // the host is done with it; A still holds the frame for a resend
    EXPECT_EQ(in_use(frames.get()), 1u);
    auto acks = take_fabric(b);
    ASSERT_EQ(acks.size(), 1u);
    const auto ack = wire::parse(acks[0]);
    ASSERT_TRUE(ack.ok());
    EXPECT_EQ(ack.packet.header.type, wire::packet_type::ack);
    EXPECT_EQ(ack.packet.header.pid, 5);
    EXPECT_EQ(ack.packet.header.latency_ns(), 7000);
    EXPECT_EQ(ack.packet.header.flow_id, parsed_data.packet.header.flow_id);
    EXPECT_EQ(ack.packet.header.seq, 0u);
    ASSERT_EQ(ack.packet.header.anchor_count, 2);
    EXPECT_EQ(ack.packet.header.anchors[0], 200u);
    EXPECT_EQ(ack.packet.header.anchors[1], 100u);
    EXPECT_EQ(ack.packet.header.anchor_index, 0);
    EXPECT_EQ(ack.packet.src_ip, 0x0a000002u);
    EXPECT_EQ(ack.packet.dst_ip, 0x0a000001u);
    EXPECT_EQ(ack.packet.dscp(), 46); // high priority
    EXPECT_EQ(ack.packet.entropy(), parsed_data.packet.entropy());
    EXPECT_EQ(b.counters().data_delivered, 1u);
    EXPECT_EQ(b.counters().ack_sent, 1u);

    // Back at A: the PIT entry takes the latency, the frame is released.
    a.from_fabric(acks.data(), 1, 20'000);
    EXPECT_EQ(a.counters().ack_rx, 1u);
    EXPECT_EQ(a.paths().path(5).real_ns, 7000);
    EXPECT_EQ(a.paths().path(5).measured_at, 20'000);
    EXPECT_EQ(in_use(frames.get()), 0u); // A let go of the acknowledged frame
}

TEST_F(golden, NonIpAndUnknownDestinationsPassThroughCounted)
{
    auto c = sender_config();
    pipeline::engine a(c);
    const bytes arp = packet_builder().eth(mac_of(0xff), mac_of(1)).ethertype(ethertype_arp).payload(28).build();
    const bytes other = packet_builder().eth(mac_of(3), mac_of(1)).ipv4("10.0.0.1", "10.0.0.3").udp(1, 2).build();
    rte_mbuf* in[2] = {to_mbuf(frames.get(), arp), to_mbuf(frames.get(), other)};
    ASSERT_EQ(a.from_host(in, 2, 1), 2);
    auto out = take_fabric(a);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(from_mbuf(out[0]), arp);
    EXPECT_EQ(from_mbuf(out[1]), other);
    EXPECT_EQ(a.counters().host_passthrough_non_ip, 1u);
    EXPECT_EQ(a.counters().host_passthrough_unknown_dst, 1u);
    free_all(out);

    c.name = "golden_drop";
    c.unknown_destination = pipeline::unknown_destination_policy::drop;
    pipeline::engine d(c);
    rte_mbuf* m = to_mbuf(frames.get(), other);
    ASSERT_EQ(d.from_host(&m, 1, 1), 1);
    EXPECT_EQ(d.pending_to_fabric(), 0u);
    EXPECT_EQ(d.counters().host_drop_unknown_dst, 1u);
}

TEST_F(golden, FrameOverTheFabricMtuIsDroppedOrPassedNeverSentOversized)
{
    auto c = sender_config();
    c.outer.mtu = 1500;
    pipeline::engine a(c);
    // 1500-byte IP packet from the host: 1514 + 42 + 36 > 1500 + 14 on the fabric.
    const bytes big = data_frame(1, 1500 - 20 - 8);
    const bytes fits = data_frame(2, 1500 - 20 - 8 - 78);
    rte_mbuf* in[2] = {to_mbuf(frames.get(), big), to_mbuf(frames.get(), fits)};
    ASSERT_EQ(a.from_host(in, 2, 1), 2);
    EXPECT_EQ(a.counters().host_drop_oversize, 1u);
    auto out = take_fabric(a);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->pkt_len, 14u + 1500u);
    free_all(out);
}

// The app steers a flow's packets by a tag in the low bits of the UDP source
// port (docs/wire-format.md "Steering tag"); the receiver's ACK echoes the
// port. Worker 2 of 3 with a 4-bit tag: every tag t has t % 3 == 2, one tag
// per flow, several tags over its flows (so a receiver with other worker
// counts spreads them), and the worker index tops the flow id.
TEST_F(golden, SteeringTagSitsInTheLowBitsOfEverySourcePort)
{
    auto c = sender_config();
    c.entropy_tag_bits = 4;
    c.workers = 3;
    c.worker = 2;
    pipeline::engine a(c);
    for (std::uint16_t sport = 1; sport <= 40; ++sport) {
        rte_mbuf* m = to_mbuf(frames.get(), data_frame(sport, 64, sport));
        ASSERT_EQ(a.from_host(&m, 1, 5000), 1);
    }
    auto out = take_fabric(a);
    ASSERT_EQ(out.size(), 40u);
    std::map<std::uint32_t, std::uint16_t> tag_of_flow;
    std::set<std::uint16_t> ports;
    for (auto* m : out) {
        const auto p = wire::parse(m);
        ASSERT_TRUE(p.ok());
        const std::uint16_t tag = p.packet.src_port & 15u;
        EXPECT_EQ(tag % 3, 2);
        tag_of_flow.emplace(p.packet.header.flow_id, tag);
        EXPECT_EQ(p.packet.header.flow_id >> 30, 2u); // the worker index (2 bits for 3 workers)
        ports.insert(p.packet.src_port);
    }
    std::set<std::uint16_t> tags;
    for (const auto& [flow, tag] : tag_of_flow) {
        tags.insert(tag);
    }
    EXPECT_EQ(tag_of_flow.size(), 40u);
    EXPECT_GE(tags.size(), 4u); // of the 5 possible: 2, 5, 8, 11, 14
    EXPECT_GT(ports.size(), 30u); // the bits above the tag still spread
    free_all(out);

    c.name = "golden_badtag";
    c.workers = 17; // 16 tags
    EXPECT_THROW(pipeline::engine bad(c), pipeline::engine_error);
    c.workers = 3;
    c.worker = 3;
    EXPECT_THROW(pipeline::engine bad(c), pipeline::engine_error);
}
