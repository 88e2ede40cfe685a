// The engine on crafted packets (docs/wire-format.md, docs/pipeline.md):
// golden bytes of a DATA packet, its ACK, decapsulation, and the ACK's
// effect at the sender.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
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

// Line rate (docs/PERFORMANCE.md §7): a first transmission goes in the host frame's own
// headroom (the packet is the host frame's mbuf, one segment, no header
// mbuf); a resend finds the host frame again wherever the first
// transmission's consumer moved the mbuf's offsets, in place when nobody
// holds the buffer any more and behind a header segment when someone does.
// The bytes are the same either way except for the resend's time and flag.
TEST_F(golden, FirstSendUsesTheHeadroomAndResendsCarryTheSameFrame)
{
    auto config = sender_config();
    config.algo.selection.probing = false; // only DATA leaves: the resends
    pipeline::engine a(config);
    const bytes frame = data_frame(3, 300);
    rte_mbuf* m = to_mbuf(frames.get(), frame);
    ASSERT_EQ(a.from_host(&m, 1, 5000), 1);
    auto first = take_fabric(a);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0], m); // the host frame's own mbuf
    EXPECT_EQ(first[0]->nb_segs, 1);
    EXPECT_EQ(rte_mbuf_refcnt_read(m), 2); // the window's and the packet's
    EXPECT_EQ(a.counters().send_chained, 0u);
    EXPECT_EQ(in_use(control.get()), 0u); // no header mbuf
    const bytes first_bytes = from_mbuf(first[0]);
    ASSERT_EQ(first_bytes.size(), 42 + 36 + frame.size());
    EXPECT_EQ(bytes(first_bytes.begin() + 78, first_bytes.end()), frame);

    // A consumer in this process (a net_ring peer, the bench) decapsulates
    // the packet in place and still holds it: the resend is a header
    // segment in front of an indirect mbuf onto the host frame.
    rte_pktmbuf_adj(first[0], 78);
    a.poll(5000 + 1'000'000); // the path's timeout: lost, resent
    auto second = take_fabric(a);
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(a.counters().data_resent, 1u);
    EXPECT_EQ(second[0]->nb_segs, 2);
    const bytes second_bytes = from_mbuf(second[0]);
    ASSERT_EQ(second_bytes.size(), first_bytes.size());
    EXPECT_EQ(bytes(second_bytes.begin() + 78, second_bytes.end()), frame);
    // Same outer headers and LAPS header but for the time and the
    // retransmit flag.
    EXPECT_EQ(hex(second_bytes, 0, 43), hex(first_bytes, 0, 43));
    EXPECT_EQ(second_bytes[43], wire::flag_retransmit);
    EXPECT_EQ(hex(second_bytes, 44, 48), hex(first_bytes, 44, 48));
    EXPECT_NE(hex(second_bytes, 48, 54), hex(first_bytes, 48, 54));
    EXPECT_EQ(hex(second_bytes, 54, 78), hex(first_bytes, 54, 78));
    free_all(first);
    free_all(second);

    // Nobody holds it now: the next resend goes in place again.
    EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
    a.poll(5000 + 3'000'000);
    auto third = take_fabric(a);
    ASSERT_EQ(third.size(), 1u);
    EXPECT_EQ(a.counters().data_resent, 2u);
    EXPECT_EQ(third[0], m);
    EXPECT_EQ(third[0]->nb_segs, 1);
    const bytes third_bytes = from_mbuf(third[0]);
    EXPECT_EQ(bytes(third_bytes.begin() + 78, third_bytes.end()), frame);
    EXPECT_EQ(hex(third_bytes, 0, 43), hex(first_bytes, 0, 43));
    EXPECT_EQ(third_bytes[43], wire::flag_retransmit);
    free_all(third);
    EXPECT_EQ(in_use(control.get()), 0u);
}

// A host frame without room for the headers in front (here 40 bytes of
// headroom for 78) is sent behind a header segment, counted, and its bytes
// are those of a frame sent in place.
TEST_F(golden, ShortHeadroomIsChainedCountedAndByteIdentical)
{
    pipeline::engine roomy(sender_config());
    auto tight_config = sender_config();
    tight_config.name = "golden_t";
    pipeline::engine tight(tight_config);
    const bytes frame = data_frame(4, 120);
    rte_mbuf* normal = to_mbuf(frames.get(), frame);
    rte_mbuf* short_room = rte_pktmbuf_alloc(frames.get());
    ASSERT_NE(short_room, nullptr);
    short_room->data_off = 40;
    std::memcpy(rte_pktmbuf_append(short_room, static_cast<std::uint16_t>(frame.size())), frame.data(), frame.size());
    ASSERT_EQ(roomy.from_host(&normal, 1, 5000), 1);
    ASSERT_EQ(tight.from_host(&short_room, 1, 5000), 1);
    auto a = take_fabric(roomy);
    auto b = take_fabric(tight);
    ASSERT_EQ(a.size(), 1u);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(a[0]->nb_segs, 1);
    EXPECT_EQ(b[0]->nb_segs, 2);
    EXPECT_EQ(roomy.counters().send_chained, 0u);
    EXPECT_EQ(tight.counters().send_chained, 1u);
    EXPECT_EQ(from_mbuf(a[0]), from_mbuf(b[0]));
    free_all(a);
    free_all(b);
}
