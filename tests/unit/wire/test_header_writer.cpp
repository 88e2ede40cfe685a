// The data path's template writer must write exactly the bytes of the
// reference encoder (encode_headers with make_data_header / ack_for), for
// any field values, anchor counts, traffic classes and configs: the golden
// bytes of the template path (docs/wire-format.md §13).
#include "tests/unit/wire/examples.hpp"
#include "wire/ack.hpp"
#include "wire/encode.hpp"
#include "wire/header_writer.hpp"
#include "wire/parse.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace laps::wire {
namespace {

namespace ex = test::wire_examples;
using test::bytes;

outer_config random_config(std::mt19937_64& rng)
{
    outer_config cfg = ex::sender_config();
    for (auto& b : cfg.own_mac) {
        b = static_cast<std::uint8_t>(rng());
    }
    for (auto& b : cfg.next_hop_mac) {
        b = static_cast<std::uint8_t>(rng());
    }
    cfg.own_ip = static_cast<std::uint32_t>(rng());
    cfg.udp_port = static_cast<std::uint16_t>(rng());
    cfg.ttl = static_cast<std::uint8_t>(rng());
    cfg.data = {static_cast<std::uint8_t>(rng() & 0x3F), static_cast<std::uint8_t>(rng() & 3)};
    cfg.ack = {static_cast<std::uint8_t>(rng() & 0x3F), static_cast<std::uint8_t>(rng() & 3)};
    cfg.probe_ack = {static_cast<std::uint8_t>(rng() & 0x3F), static_cast<std::uint8_t>(rng() & 3)};
    return cfg;
}

// A DATA to `receiver` with random fields and 0..max_anchors random `anchors`.
packet_spec random_data(std::mt19937_64& rng, const outer_config& receiver, std::vector<std::uint32_t>& anchors)
{
    packet_spec spec;
    spec.dst_ip = receiver.own_ip;
    spec.entropy = static_cast<std::uint16_t>(rng());
    anchors.assign(rng() % (max_anchors + 1), 0);
    for (auto& a : anchors) {
        a = static_cast<std::uint32_t>(rng());
    }
    spec.header = make_data_header(static_cast<tables::path_id>(rng()), static_cast<common::time_ns>(rng() >> 1),
                                   static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng()), anchors,
                                   (rng() & 1) != 0, static_cast<std::uint32_t>(rng()));
    return spec;
}

TEST(wire_header_writer, data_headers_equal_the_reference_encoder)
{
    std::mt19937_64 rng(15);
    for (int round = 0; round < 20000; ++round) {
        const outer_config cfg = random_config(rng);
        const header_writer writer(cfg);
        std::vector<std::uint32_t> anchors(rng() % (max_anchors + 1));
        for (auto& a : anchors) {
            a = static_cast<std::uint32_t>(rng());
        }
        data_fields f;
        f.pid = static_cast<tables::path_id>(rng());
        f.now = static_cast<common::time_ns>(rng() >> 1);
        f.flow_id = static_cast<std::uint32_t>(rng());
        f.seq = static_cast<std::uint32_t>(rng());
        f.window_offset = static_cast<std::uint16_t>(rng());
        f.epoch = static_cast<std::uint32_t>(rng());
        f.resend = (rng() & 1) != 0;
        const auto dst = static_cast<std::uint32_t>(rng());
        const auto entropy = static_cast<std::uint16_t>(rng());
        // Any frame from 14 bytes up to what fits 65535 bytes of IPv4.
        const auto inner = static_cast<std::uint16_t>(ether_size + rng() % (0xFFFF - 20 - 8 - 44 - ether_size + 1));

        packet_spec spec;
        spec.dst_ip = dst;
        spec.entropy = entropy;
        spec.header = make_data_header(f.pid, f.now, f.flow_id, f.seq, anchors, f.resend, f.epoch);
        spec.header.window_offset = f.window_offset;
        bytes want(headers_size(anchors.size()));
        ASSERT_EQ(encode_headers(want, cfg, spec, inner), want.size());
        bytes got(want.size(), 0xEE);
        ASSERT_EQ(writer.data(got.data(), dst, entropy, f, anchors, inner), want.size());
        ASSERT_EQ(got, want) << "round " << round;
    }
}

TEST(wire_header_writer, answers_equal_the_reference_encoder)
{
    std::mt19937_64 rng(16);
    for (int round = 0; round < 20000; ++round) {
        const outer_config sender = random_config(rng);
        const outer_config receiver = random_config(rng);
        const header_writer writer(receiver);
        // A received DATA or PROBE with random fields, as the parser gives it.
        std::vector<std::uint32_t> anchors;
        packet_spec spec = random_data(rng, receiver, anchors);
        const bool probe = (rng() & 3) == 0;
        std::size_t inner = 0;
        if (probe) {
            spec.header.type = packet_type::probe;
        } else {
            spec.header.window_offset = static_cast<std::uint16_t>(rng());
            inner = ether_size + rng() % 9000;
        }
        outer_config marked = sender;
        marked.data.ecn = static_cast<std::uint8_t>(rng() & 3); // CE (3) sometimes: the echo flag
        marked.probe.ecn = marked.data.ecn;
        bytes packet(headers_size(anchors.size()) + inner);
        ASSERT_NE(encode_headers(packet, marked, spec, inner), 0u);
        const parse_result received = parse(packet, marked.udp_port);
        ASSERT_TRUE(received.ok()) << to_string(received.error);
        // Any clock: latencies of either sign, and beyond the 48-bit range.
        const auto now = static_cast<common::time_ns>(rng() >> (rng() % 2 == 0 ? 16 : 1));

        const packet_spec reference = ack_for(received.packet, now);
        bytes want(headers_size(anchors.size()));
        ASSERT_EQ(encode_headers(want, receiver, reference, 0), want.size());
        bytes got(want.size(), 0xEE);
        ASSERT_EQ(writer.answer(got.data(), received.packet, now), want.size());
        ASSERT_EQ(got, want) << "round " << round;
    }
}

// A CREDIT (receiver-paced credits) along the route of a received DATA: the
// reference encoder's packet of type CREDIT to the DATA's source, with its
// entropy, pid, flow and epoch, the count granted as `seq`, time 0 and the
// anchors reversed, as the ACK's.
TEST(wire_header_writer, credits_equal_the_reference_encoder)
{
    std::mt19937_64 rng(17);
    for (int round = 0; round < 5000; ++round) {
        const outer_config sender = random_config(rng);
        const outer_config receiver = random_config(rng);
        const header_writer writer(receiver);
        std::vector<std::uint32_t> anchors;
        packet_spec spec = random_data(rng, receiver, anchors);
        spec.header.flags |= flag_pull;
        bytes packet(headers_size(anchors.size()) + ether_size);
        ASSERT_NE(encode_headers(packet, sender, spec, ether_size), 0u);
        const parse_result received = parse(packet, sender.udp_port);
        ASSERT_TRUE(received.ok()) << to_string(received.error);
        EXPECT_TRUE(received.packet.header.has_flag(flag_pull));
        const auto granted = static_cast<std::uint32_t>(rng());

        packet_spec reference;
        reference.dst_ip = received.packet.src_ip;
        reference.entropy = received.packet.entropy();
        reference.header.type = packet_type::credit;
        reference.header.pid = received.packet.header.pid;
        reference.header.flow_id = received.packet.header.flow_id;
        reference.header.seq = granted;
        reference.header.epoch = received.packet.header.epoch;
        std::vector<std::uint32_t> reversed(anchors.rbegin(), anchors.rend());
        reference.header.set_anchors(reversed);
        bytes want(headers_size(anchors.size()));
        ASSERT_EQ(encode_headers(want, receiver, reference, 0), want.size());
        bytes got(want.size(), 0xEE);
        ASSERT_EQ(writer.credit(got.data(), credit_route_of(received.packet), granted), want.size());
        ASSERT_EQ(got, want) << "round " << round;
        const parse_result credit = parse(got, receiver.udp_port);
        ASSERT_TRUE(credit.ok()) << to_string(credit.error);
        EXPECT_EQ(credit.packet.header.type, packet_type::credit);
        EXPECT_EQ(credit.packet.header.seq, granted);
    }
}

} // namespace
} // namespace laps::wire
