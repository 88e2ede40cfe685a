// ACK/PROBE_ACK construction and the 48-bit time field.
#include "tests/unit/wire/examples.hpp"
#include "wire/ack.hpp"
#include "wire/bytes.hpp"
#include "wire/time48.hpp"

#include <gtest/gtest.h>

namespace laps::wire {
namespace {

namespace ex = test::wire_examples;
using test::bytes;

constexpr std::uint64_t two48 = std::uint64_t{1} << 48;

TEST(wire_time48, wraps_modulo_2_48)
{
    EXPECT_EQ(to_time48(0), 0u);
    EXPECT_EQ(to_time48(static_cast<common::time_ns>(two48 - 1)), two48 - 1);
    EXPECT_EQ(to_time48(static_cast<common::time_ns>(two48)), 0u);
    EXPECT_EQ(to_time48(static_cast<common::time_ns>(two48 + 5)), 5u);
    EXPECT_EQ(to_time48(-1), two48 - 1);
}

TEST(wire_time48, sign_extension)
{
    EXPECT_EQ(sign_extend48(0), 0);
    EXPECT_EQ(sign_extend48(1), 1);
    EXPECT_EQ(sign_extend48(two48 - 1), -1);
    EXPECT_EQ(sign_extend48(0x7FFFFFFFFFFF), latency48_max);
    EXPECT_EQ(sign_extend48(0x800000000000), latency48_min);
    EXPECT_EQ(sign_extend48(0xFFFFFFFFFA24), -1500);
    // Bits above 48 are ignored.
    EXPECT_EQ(sign_extend48(0xABCD000000000001), 1);
}

TEST(wire_time48, latency_across_the_wrap)
{
    // Sent just before the sender's 48-bit clock wraps, received just after.
    const std::uint64_t sent = two48 - 100;
    EXPECT_EQ(latency_since(sent, static_cast<common::time_ns>(two48 + 400)), 500);
    // A receiver clock behind the sender's: negative, across the wrap too.
    EXPECT_EQ(latency_since(50, static_cast<common::time_ns>(two48 - 50)), -100);
    EXPECT_EQ(latency_since(1000, 400), -600);
    // Full 64-bit clocks far apart in their high bits: only the low 48 count.
    EXPECT_EQ(latency_since(to_time48(7 * static_cast<common::time_ns>(two48) + 10),
                            3 * static_cast<common::time_ns>(two48) + 25),
              15);
}

TEST(wire_time48, latency_round_trips_through_the_field)
{
    for (std::int64_t l : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{123456789},
                           std::int64_t{-987654321}, latency48_max, latency48_min}) {
        EXPECT_EQ(sign_extend48(latency_to_time48(l)), l) << l;
    }
    // Beyond +-2^47: clamped, never flipped in sign.
    EXPECT_EQ(sign_extend48(latency_to_time48(latency48_max + 1)), latency48_max);
    EXPECT_EQ(sign_extend48(latency_to_time48(std::int64_t{1} << 60)), latency48_max);
    EXPECT_EQ(sign_extend48(latency_to_time48(-(std::int64_t{1} << 60))), latency48_min);
}

TEST(wire_ack, ack_of_a_data_packet)
{
    const parse_result data = parse(ex::data_packet());
    ASSERT_TRUE(data.ok());
    const common::time_ns now = static_cast<common::time_ns>(ex::data_time) + 7000;
    const packet_spec ack = ack_for(data.packet, now);

    EXPECT_EQ(ack.dst_ip, 0x0a000001u) << "back to the data packet's source";
    EXPECT_EQ(ack.entropy, 0x1234) << "same route class as the data packet";
    const laps_header& h = ack.header;
    EXPECT_EQ(h.type, packet_type::ack);
    EXPECT_EQ(h.flags, 0);
    EXPECT_EQ(h.pid, 0x0102);
    EXPECT_EQ(h.latency_ns(), 7000);
    EXPECT_EQ(h.flow_id, 7u);
    EXPECT_EQ(h.seq, 42u);
    EXPECT_EQ(h.inner_length, 0);
    EXPECT_EQ(h.anchor_count, 2);
    EXPECT_EQ(h.anchor_index, 0);
    EXPECT_EQ(h.anchors[0], 0x0a000202u);
    EXPECT_EQ(h.anchors[1], 0x0a000101u);
    EXPECT_EQ(h.anchors[2], 0u);
    EXPECT_EQ(h.anchors[3], 0u);

    // Encoded by the receiver and parsed by the sender: same fields.
    const bytes wire_ack = ex::encode(ex::receiver_config(), ack);
    const parse_result back = parse(wire_ack);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back.packet.header, h);
    EXPECT_EQ(back.packet.src_ip, 0x0a000102u);
    EXPECT_EQ(back.packet.dst_ip, 0x0a000001u);
    EXPECT_EQ(back.packet.dscp(), dscp_expedited);
    EXPECT_EQ(back.packet.ecn(), ecn_not_ect);
}

TEST(wire_ack, anchors_are_reversed_for_every_count)
{
    for (std::size_t n = 0; n <= max_anchors; ++n) {
        std::vector<std::uint32_t> anchors;
        for (std::size_t i = 0; i < n; ++i) {
            anchors.push_back(0x0a000000 + static_cast<std::uint32_t>(i + 1));
        }
        packet_spec s = ex::data_spec();
        s.header = make_data_header(9, 100, 1, 2, anchors);
        s.header.anchor_index = static_cast<std::uint8_t>(n); // as a switch leaves it
        const parse_result r = parse(ex::encode(ex::sender_config(), s, ex::host_frame()));
        ASSERT_TRUE(r.ok()) << n;
        const laps_header ack = ack_for(r.packet, 200).header;
        ASSERT_EQ(ack.anchor_count, n);
        EXPECT_EQ(ack.anchor_index, 0);
        for (std::size_t i = 0; i < n; ++i) {
            EXPECT_EQ(ack.anchors[i], anchors[n - 1 - i]) << n << "/" << i;
        }
    }
}

TEST(wire_ack, ce_marked_data_gets_ecn_echo)
{
    bytes p = ex::data_packet();
    p[outer_off::ip_tos] = (p[outer_off::ip_tos] & 0xFC) | ecn_ce; // a switch marked it
    const parse_result r = parse(p);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r.packet.ce_marked());
    const packet_spec ack = ack_for(r.packet, 0);
    EXPECT_TRUE(ack.header.has_flag(flag_ecn_echo));
    const parse_result back = parse(ex::encode(ex::receiver_config(), ack));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back.packet.header.flags, flag_ecn_echo);
}

TEST(wire_ack, retransmit_flag_is_not_echoed)
{
    packet_spec s = ex::data_spec();
    s.header.flags = flag_retransmit;
    const parse_result r = parse(ex::encode(ex::sender_config(), s, ex::host_frame()));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(ack_for(r.packet, 0).header.flags, 0);
}

TEST(wire_ack, probe_ack_of_a_probe)
{
    const parse_result probe = parse(ex::probe_packet());
    ASSERT_TRUE(probe.ok());
    const packet_spec pa = ack_for(probe.packet, static_cast<common::time_ns>(ex::probe_time) - 20);
    EXPECT_EQ(pa.header.type, packet_type::probe_ack);
    EXPECT_EQ(pa.header.pid, 3);
    EXPECT_EQ(pa.header.seq, 9u);
    EXPECT_EQ(pa.header.flow_id, 0u);
    EXPECT_EQ(pa.header.latency_ns(), -20);
    EXPECT_EQ(pa.header.anchor_count, 1);
    EXPECT_EQ(pa.header.anchors[0], 0x0a000303u);
    EXPECT_EQ(pa.entropy, 0x0042);
    const bytes encoded = ex::encode(ex::receiver_config(), pa);
    bytes out(encoded.size());
    EXPECT_EQ(encode_probe_ack(out, ex::receiver_config(), pa), encoded.size());
    EXPECT_EQ(out, encoded);
}

TEST(wire_ack, answer_types)
{
    EXPECT_EQ(answer_type(packet_type::data), packet_type::ack);
    EXPECT_EQ(answer_type(packet_type::probe), packet_type::probe_ack);
    EXPECT_TRUE(is_ack(packet_type::ack));
    EXPECT_TRUE(is_ack(packet_type::probe_ack));
    EXPECT_FALSE(is_ack(packet_type::data));
    EXPECT_FALSE(is_ack(packet_type::probe));
}

} // namespace
} // namespace laps::wire
