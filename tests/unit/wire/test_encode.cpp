// Golden bytes and field positions of every packet type.
#include "tests/unit/wire/examples.hpp"
#include "wire/bytes.hpp"
#include "wire/encode.hpp"
#include "wire/layout.hpp"

#include <gtest/gtest.h>

#include <string_view>

namespace laps::wire {
namespace {

namespace ex = test::wire_examples;
using test::bytes;

// Typed by hand from the format description, not produced by the encoder:
// the encoder must match it byte for byte.
const bytes golden_data = {
    // outer Ethernet: next hop, own MAC, IPv4
    0x02, 0x5e, 0x00, 0x00, 0x00, 0x01, 0x02, 0x1a, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
    // outer IPv4: 45, TOS 0x02 (DSCP 0, ECT(0)), len 114, id 0, DF, TTL 64, UDP, checksum,
    // 10.0.0.1 -> 10.0.1.2
    0x45, 0x02, 0x00, 0x72, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x25, 0x77, 0x0a, 0x00, 0x00,
    0x01, 0x0a, 0x00, 0x01, 0x02,
    // outer UDP: 0xC000 | 0x1234 -> 19521, len 94, checksum 0
    0xd2, 0x34, 0x4c, 0x41, 0x00, 0x5e, 0x00, 0x00,
    // LAPS: v2 DATA, flags 0, 2 anchors, index 0, pid 0x0102, time 0x123456789abc
    0x21, 0x00, 0x02, 0x00, 0x01, 0x02, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc,
    // flow 7, seq 42, inner_length 50, window_offset 0, epoch 0x00c0ffee
    0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x00, 0x00, 0xc0, 0xff, 0xee,
    // anchors 10.0.1.1, 10.0.2.2
    0x0a, 0x00, 0x01, 0x01, 0x0a, 0x00, 0x02, 0x02,
    // the host frame, untouched
    0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x45,
    0x00, 0x00, 0x24, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb6, 0x5a, 0xc0, 0xa8, 0x01, 0x0a,
    0xc0, 0xa8, 0x02, 0x14, 0x03, 0xe8, 0x07, 0xd0, 0x00, 0x10, 0x50, 0x90, 0x6c, 0x61, 0x70,
    0x73, 0x21, 0x21, 0x21, 0x21};

TEST(wire_encode, host_frame_becomes_the_golden_data_packet)
{
    EXPECT_EQ(ex::host_frame(), bytes(golden_data.begin() + 78, golden_data.end()));
    EXPECT_EQ(ex::data_packet(), golden_data);
}

// The value of a field of `packet` found through the layout table.
std::uint64_t field(const bytes& packet, std::string_view name, std::size_t item = 0)
{
    for (const field_position& f : field_layout) {
        if (f.name != name) {
            continue;
        }
        const std::size_t off = f.offset + item * f.length;
        EXPECT_LE(off + f.length, packet.size()) << name;
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < f.length && off + i < packet.size(); ++i) {
            v = (v << 8) | packet[off + i];
        }
        return v;
    }
    ADD_FAILURE() << "no field " << name;
    return 0;
}

void expect_outer(const bytes& p, std::uint32_t src, std::uint32_t dst, std::uint8_t tos,
                  std::uint16_t entropy, std::size_t inner)
{
    const std::size_t laps = p.size() - outer_size - inner;
    EXPECT_EQ(field(p, "eth.type"), 0x0800u);
    EXPECT_EQ(field(p, "ip.version_ihl"), 0x45u);
    EXPECT_EQ(field(p, "ip.dsfield"), tos);
    EXPECT_EQ(field(p, "ip.len"), p.size() - ether_size);
    EXPECT_EQ(field(p, "ip.id"), 0u);
    EXPECT_EQ(field(p, "ip.flags_frag"), 0x4000u);
    EXPECT_EQ(field(p, "ip.ttl"), 64u);
    EXPECT_EQ(field(p, "ip.proto"), 17u);
    EXPECT_EQ(field(p, "ip.src"), src);
    EXPECT_EQ(field(p, "ip.dst"), dst);
    EXPECT_EQ(field(p, "udp.srcport"), 0xC000u | entropy);
    EXPECT_EQ(field(p, "udp.dstport"), default_udp_port);
    EXPECT_EQ(field(p, "udp.length"), udp_size + laps + inner);
    EXPECT_EQ(field(p, "udp.checksum"), 0u);
    // A header with its checksum in place sums to 0xffff.
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < ipv4_size; i += 2) {
        sum += load_be16(&p[outer_off::ip + i]);
    }
    while (sum >> 16) {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    EXPECT_EQ(sum, 0xFFFFu);
}

TEST(wire_encode, data_fields_at_documented_offsets)
{
    const bytes p = ex::data_packet();
    expect_outer(p, 0x0a000001, 0x0a000102, 0x02, 0x1234, 50);
    EXPECT_EQ(field(p, "laps.version_type"), 0x21u);
    EXPECT_EQ(field(p, "laps.flags"), 0u);
    EXPECT_EQ(field(p, "laps.anchor_count"), 2u);
    EXPECT_EQ(field(p, "laps.anchor_index"), 0u);
    EXPECT_EQ(field(p, "laps.pid"), 0x0102u);
    EXPECT_EQ(field(p, "laps.time"), ex::data_time);
    EXPECT_EQ(field(p, "laps.flow_id"), 7u);
    EXPECT_EQ(field(p, "laps.seq"), 42u);
    EXPECT_EQ(field(p, "laps.inner_length"), 50u);
    EXPECT_EQ(field(p, "laps.window_offset"), 0u);
    EXPECT_EQ(field(p, "laps.anchor", 0), 0x0a000101u);
    EXPECT_EQ(field(p, "laps.anchor", 1), 0x0a000202u);
}

TEST(wire_encode, ack_fields_at_documented_offsets)
{
    const bytes p = ex::ack_packet();
    ASSERT_EQ(p.size(), outer_size + laps_size(2));
    // Back to the sender, high priority, not ECN-capable.
    expect_outer(p, 0x0a000102, 0x0a000001, 46 << 2, 0x1234, 0);
    EXPECT_EQ(field(p, "eth.dst"), 0x025e00000002u);
    EXPECT_EQ(field(p, "eth.src"), 0x021a00000002u);
    EXPECT_EQ(field(p, "laps.version_type"), 0x22u);
    EXPECT_EQ(field(p, "laps.flags"), 0u);
    EXPECT_EQ(field(p, "laps.anchor_count"), 2u);
    EXPECT_EQ(field(p, "laps.anchor_index"), 0u);
    EXPECT_EQ(field(p, "laps.pid"), 0x0102u);
    EXPECT_EQ(field(p, "laps.time"), 0xFFFFFFFFFA24u); // -1500 in 48 bits
    EXPECT_EQ(field(p, "laps.flow_id"), 7u);
    EXPECT_EQ(field(p, "laps.seq"), 42u);
    // ACK: the two bytes of inner_length echo the DATA's time (low 16 bits).
    EXPECT_EQ(field(p, "laps.inner_length"), 0x9ABCu);
    EXPECT_EQ(field(p, "laps.anchor", 0), 0x0a000202u);
    EXPECT_EQ(field(p, "laps.anchor", 1), 0x0a000101u);
}

TEST(wire_encode, probe_fields_at_documented_offsets)
{
    const bytes p = ex::probe_packet();
    ASSERT_EQ(p.size(), outer_size + laps_size(1));
    expect_outer(p, 0x0a000001, 0x0a000102, 0x02, 0x0042, 0);
    EXPECT_EQ(field(p, "laps.version_type"), 0x23u);
    EXPECT_EQ(field(p, "laps.anchor_count"), 1u);
    EXPECT_EQ(field(p, "laps.pid"), 3u);
    EXPECT_EQ(field(p, "laps.time"), ex::probe_time);
    EXPECT_EQ(field(p, "laps.flow_id"), 0u);
    EXPECT_EQ(field(p, "laps.seq"), 9u);
    EXPECT_EQ(field(p, "laps.inner_length"), 0u);
    EXPECT_EQ(field(p, "laps.anchor", 0), 0x0a000303u);
}

TEST(wire_encode, probe_ack_fields_at_documented_offsets)
{
    const bytes p = ex::probe_ack_packet();
    ASSERT_EQ(p.size(), outer_size + laps_size(1));
    expect_outer(p, 0x0a000102, 0x0a000001, 46 << 2, 0x0042, 0);
    EXPECT_EQ(field(p, "laps.version_type"), 0x24u);
    EXPECT_EQ(field(p, "laps.pid"), 3u);
    EXPECT_EQ(field(p, "laps.time"), 2500u);
    EXPECT_EQ(field(p, "laps.seq"), 9u);
    EXPECT_EQ(field(p, "laps.anchor", 0), 0x0a000303u);
}

TEST(wire_encode, traffic_class_and_ttl_follow_the_config)
{
    outer_config cfg = ex::sender_config();
    cfg.data = {10, ecn_not_ect};
    cfg.ttl = 7;
    cfg.udp_port = 20000;
    const bytes inner = ex::host_frame();
    bytes out(200);
    const std::size_t n = encode_data(out, cfg, ex::data_spec(), inner);
    ASSERT_GT(n, 0u);
    out.resize(n);
    EXPECT_EQ(field(out, "ip.dsfield"), 10u << 2);
    EXPECT_EQ(field(out, "ip.ttl"), 7u);
    EXPECT_EQ(field(out, "udp.dstport"), 20000u);
}

TEST(wire_encode, entropy_keeps_the_source_port_in_the_dynamic_range)
{
    EXPECT_EQ(udp_source_port(0), 0xC000);
    EXPECT_EQ(udp_source_port(0x3FFF), 0xFFFF);
    EXPECT_EQ(udp_source_port(0xFFFF), 0xFFFF); // high bits dropped, never below 49152
    EXPECT_EQ(udp_source_port(0x4001), 0xC001);
}

TEST(wire_encode, refuses_what_would_not_parse)
{
    const outer_config cfg = ex::sender_config();
    const bytes inner = ex::host_frame();
    bytes out(256);

    packet_spec s = ex::data_spec();
    EXPECT_EQ(encode_ack(out, cfg, s), 0u) << "type mismatch";
    EXPECT_EQ(encode_data(out, cfg, s, std::span(inner).first(13)), 0u) << "inner < Ethernet";
    EXPECT_EQ(encode_data(std::span(out).first(127), cfg, s, inner), 0u) << "buffer too small";
    EXPECT_EQ(encode_data(std::span(out).first(128), cfg, s, inner), 128u);

    s.header.anchor_count = 5;
    EXPECT_EQ(encode_data(out, cfg, s, inner), 0u) << "too many anchors";
    s = ex::data_spec();
    s.header.anchor_index = 3;
    EXPECT_EQ(encode_data(out, cfg, s, inner), 0u) << "index past count";
    s = ex::data_spec();
    s.header.type = static_cast<packet_type>(9);
    EXPECT_EQ(encode_headers(out, cfg, s, inner.size()), 0u) << "unknown type";

    packet_spec probe = ex::probe_spec();
    EXPECT_EQ(encode_headers(out, cfg, probe, 20), 0u) << "inner frame on a probe";
    EXPECT_EQ(encode_probe(std::span(out).first(73), cfg, probe), 0u);
    EXPECT_EQ(encode_probe(std::span(out).first(74), cfg, probe), 74u);

    // IPv4 total length is 16 bits.
    bytes big(0xFFFF);
    bytes big_out(0x10100);
    EXPECT_EQ(encode_data(big_out, cfg, ex::data_spec(), big), 0u);
    const std::size_t fits = 0xFFFF - (ipv4_size + udp_size + laps_size(2));
    EXPECT_EQ(encode_data(big_out, cfg, ex::data_spec(), std::span(big).first(fits)),
              fits + headers_size(2));
}

// Bytes 22-23 of the LAPS header: window_offset in DATA, the answered
// packet's size (acked_bytes) in ACK/PROBE_ACK, 0 in PROBE.
TEST(wire_encode, unknown_flags_are_sent_as_zero_window_offset_only_in_data)
{
    packet_spec s = ex::data_spec();
    // Every bit but AUTHENTICATED, which adds the trailer (test_auth.cpp).
    s.header.flags = static_cast<std::uint8_t>(0xFF & ~flag_authenticated);
    s.header.window_offset = 300;
    const bytes inner = ex::host_frame();
    bytes out(256);
    ASSERT_GT(encode_data(out, ex::sender_config(), s, inner), 0u);
    EXPECT_EQ(out[outer_off::laps + laps_off::flags], known_flags & ~flag_authenticated);
    EXPECT_EQ(load_be16(&out[outer_off::laps + laps_off::window_offset]), 300u);
    const auto parsed = parse(std::span<const std::uint8_t>(out.data(), headers_size(2) + inner.size()));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed.packet.header.window_offset, 300u);

    packet_spec ack = ack_for(parsed.packet, 1000);
    ack.header.window_offset = 77; // not DATA: not sent
    bytes a(128);
    ASSERT_GT(encode_ack(a, ex::receiver_config(), ack), 0u);
    EXPECT_EQ(load_be16(&a[outer_off::laps + laps_off::acked_bytes]), headers_size(2) + inner.size());
    const auto parsed_ack = parse(std::span<const std::uint8_t>(a.data(), headers_size(2)));
    ASSERT_TRUE(parsed_ack.ok());
    EXPECT_EQ(parsed_ack.packet.header.acked_bytes, headers_size(2) + inner.size());
    EXPECT_EQ(parsed_ack.packet.header.window_offset, 0u);
    EXPECT_EQ(parsed_ack.packet.header.epoch, ex::sender_epoch); // echoed
}

TEST(wire_encode, retransmit_flag)
{
    const laps_header h = make_data_header(1, 5, 2, 3, {}, true);
    EXPECT_TRUE(h.has_flag(flag_retransmit));
    EXPECT_EQ(h.anchor_count, 0);
    EXPECT_EQ(h.size(), laps_fixed_size);
}

TEST(wire_encode, max_overhead_is_86_bytes)
{
    EXPECT_EQ(outer_size, 42u);
    EXPECT_EQ(laps_size(max_anchors), 44u);
    EXPECT_EQ(max_overhead, 86u);
    EXPECT_EQ(headers_size(4), 86u);
}

} // namespace
} // namespace laps::wire
