// The parser: every packet type round-trips, every malformed input gets its
// reason, and no input is read past its end (the truncation tests copy each
// prefix into an allocation of exactly its size, for ASan and valgrind).
#include "tests/unit/wire/examples.hpp"
#include "tests/unit/wire/mutate.hpp"
#include "tests/unit/wire/packet_builder.hpp"
#include "wire/bytes.hpp"
#include "wire/parse.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <set>

namespace laps::wire {
namespace {

namespace ex = test::wire_examples;
using test::bytes;

constexpr std::size_t laps_at = outer_off::laps;

// Parses exactly `n` bytes of `p` from a heap block of exactly `n` bytes.
parse_result parse_exact(const bytes& p, std::size_t n, std::size_t pit_capacity = 0)
{
    std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[n == 0 ? 1 : n]);
    std::copy_n(p.begin(), n, copy.get());
    return parse({copy.get(), n}, default_udp_port, pit_capacity);
}

parse_error error_of(const bytes& p, std::size_t pit_capacity = 0)
{
    return parse_exact(p, p.size(), pit_capacity).error;
}

// Cuts `p` to `n` bytes and fixes the outer IPv4 and UDP lengths so that only
// the innermost layer is short.
bytes cut_consistently(bytes p, std::size_t n)
{
    p.resize(n);
    if (n >= outer_off::ip + ipv4_size) {
        store_be16(&p[outer_off::ip_total_length], static_cast<std::uint16_t>(n - ether_size));
    }
    if (n >= outer_off::udp + udp_size) {
        store_be16(&p[outer_off::udp_length], static_cast<std::uint16_t>(n - outer_off::udp));
    }
    return p;
}

TEST(wire_parse, data_round_trip)
{
    const bytes p = ex::data_packet();
    const parse_result r = parse(p);
    ASSERT_TRUE(r.ok()) << to_string(r.error);
    laps_header expected = ex::data_spec().header;
    expected.inner_length = 50;
    EXPECT_EQ(r.packet.header, expected);
    EXPECT_EQ(r.packet.src_ip, 0x0a000001u);
    EXPECT_EQ(r.packet.dst_ip, 0x0a000102u);
    EXPECT_EQ(r.packet.src_port, 0xC000 | 0x1234);
    EXPECT_EQ(r.packet.entropy(), 0x1234);
    EXPECT_EQ(r.packet.ecn(), ecn_ect0);
    EXPECT_EQ(r.packet.dscp(), 0);
    EXPECT_FALSE(r.packet.ce_marked());
    EXPECT_EQ(r.packet.ttl, 64);
    EXPECT_FALSE(r.packet.vlan);
    // The outer MACs are the encoder's; the parsed record does not carry them (nothing reads them).
    const auto& own = ex::sender_config().own_mac;
    const auto& next_hop = ex::sender_config().next_hop_mac;
    EXPECT_TRUE(std::equal(own.begin(), own.end(), p.begin() + outer_off::eth_src));
    EXPECT_TRUE(std::equal(next_hop.begin(), next_hop.end(), p.begin() + outer_off::eth_dst));
    EXPECT_EQ(r.packet.laps_offset, 42);
    EXPECT_EQ(r.packet.inner_offset, 78);
    EXPECT_EQ(r.packet.header.epoch, ex::sender_epoch);
    EXPECT_EQ(r.packet.frame_length, p.size());
    const auto inner = r.packet.inner(p);
    EXPECT_EQ(bytes(inner.begin(), inner.end()), ex::host_frame());
}

TEST(wire_parse, every_type_round_trips)
{
    for (const auto& e : ex::all()) {
        const parse_result r = parse(e.packet);
        ASSERT_TRUE(r.ok()) << e.name << ": " << to_string(r.error);
        // "data_authenticated" is a DATA with the authentication trailer.
        EXPECT_EQ(to_string(r.packet.header.type), e.name.substr(0, e.name.find("_authenticated")));
        EXPECT_EQ(r.packet.authenticated(), e.name.ends_with("_authenticated"));
    }
    EXPECT_EQ(parse(ex::ack_packet()).packet.header.latency_ns(), ex::data_latency);
    EXPECT_EQ(parse(ex::probe_ack_packet()).packet.header.latency_ns(), ex::probe_latency);
}

TEST(wire_parse, every_prefix_of_every_packet_is_truncated)
{
    for (const auto& e : ex::all()) {
        for (std::size_t n = 0; n < e.packet.size(); ++n) {
            const parse_error want =
                n < ether_size ? parse_error::truncated_ethernet : parse_error::truncated_ipv4;
            EXPECT_EQ(parse_exact(e.packet, n).error, want) << e.name << " cut at " << n;
        }
        EXPECT_TRUE(parse_exact(e.packet, e.packet.size()).ok()) << e.name;
    }
}

TEST(wire_parse, every_consistent_cut_fails_at_the_right_layer)
{
    for (const auto& e : ex::all()) {
        const parse_result full = parse(e.packet);
        ASSERT_TRUE(full.ok());
        const std::size_t header_end =
            laps_at + full.packet.header.size() + trailer_size(full.packet.header.flags);
        for (std::size_t n = 0; n < e.packet.size(); ++n) {
            const bytes cut = cut_consistently(e.packet, n);
            parse_error want = parse_error::ok;
            if (n < ether_size) {
                want = parse_error::truncated_ethernet;
            } else if (n < outer_off::udp) {
                want = parse_error::truncated_ipv4;
            } else if (n < laps_at) {
                want = parse_error::truncated_udp;
            } else if (n < header_end) {
                want = parse_error::truncated_laps;
            } else {
                want = parse_error::bad_inner_length; // DATA with part of its frame
            }
            EXPECT_EQ(error_of(cut), want) << e.name << " cut at " << n;
        }
    }
}

TEST(wire_parse, trailing_ethernet_padding_is_not_part_of_the_packet)
{
    bytes p = ex::ack_packet();
    const std::size_t real = p.size();
    p.resize(real + 10, 0xEE);
    const parse_result r = parse(p);
    ASSERT_TRUE(r.ok()) << to_string(r.error);
    EXPECT_EQ(r.packet.frame_length, real);
}

TEST(wire_parse, control_packets_may_carry_padding)
{
    bytes p = cut_consistently(ex::probe_packet(), ex::probe_packet().size());
    p.resize(p.size() + 30, 0);
    p = cut_consistently(p, p.size());
    EXPECT_EQ(error_of(p), parse_error::ok);
}

TEST(wire_parse, bad_laps_fields)
{
    const bytes data = ex::data_packet();
    auto with = [&](std::size_t off, std::uint8_t v) {
        bytes p = data;
        p[laps_at + off] = v;
        return p;
    };
    EXPECT_EQ(error_of(with(laps_off::version_type, 0x01)), parse_error::bad_version);
    // Version 1 (no epoch, 24-byte header) is not taken for version 2.
    EXPECT_EQ(error_of(with(laps_off::version_type, 0x11)), parse_error::bad_version);
    EXPECT_EQ(error_of(with(laps_off::version_type, 0x31)), parse_error::bad_version);
    EXPECT_EQ(error_of(with(laps_off::version_type, 0xF1)), parse_error::bad_version);
    EXPECT_EQ(error_of(with(laps_off::version_type, 0x20)), parse_error::bad_type);
    for (std::uint8_t t = 7; t < 16; ++t) { // 5 is ACK_RUN (test_ack_run.cpp), 6 CREDIT
        EXPECT_EQ(error_of(with(laps_off::version_type, 0x20 | t)), parse_error::bad_type) << int(t);
    }
    for (int n = 5; n < 256; ++n) {
        EXPECT_EQ(error_of(with(laps_off::anchor_count, static_cast<std::uint8_t>(n))),
                  parse_error::too_many_anchors)
            << n;
    }
    EXPECT_EQ(error_of(with(laps_off::anchor_index, 3)), parse_error::bad_anchor_index);
    EXPECT_EQ(error_of(with(laps_off::anchor_index, 255)), parse_error::bad_anchor_index);
    EXPECT_EQ(error_of(with(laps_off::anchor_index, 2)), parse_error::ok); // reached the last anchor
    // Fewer anchors than the packet has: the rest no longer matches inner_length.
    EXPECT_EQ(error_of(with(laps_off::anchor_count, 1)), parse_error::bad_inner_length);
    bytes past = with(laps_off::anchor_count, 1);
    past[laps_at + laps_off::anchor_index] = 2;
    EXPECT_EQ(error_of(past), parse_error::bad_anchor_index);
    // More anchors than the packet has: the "anchors" eat the inner frame.
    EXPECT_EQ(error_of(with(laps_off::anchor_count, 4)), parse_error::bad_inner_length);
}

TEST(wire_parse, inner_length_must_fill_the_udp_payload_exactly)
{
    const bytes data = ex::data_packet();
    for (std::uint16_t len : {0, 13, 49, 51, 52, 0xFFFF}) {
        bytes p = data;
        store_be16(&p[laps_at + laps_off::inner_length], len);
        EXPECT_EQ(error_of(p), parse_error::bad_inner_length) << len;
    }
    // A DATA packet whose frame is shorter than an Ethernet header.
    bytes tiny = cut_consistently(data, laps_at + laps_size(2) + 13);
    store_be16(&tiny[laps_at + laps_off::inner_length], 13);
    EXPECT_EQ(error_of(tiny), parse_error::bad_inner_length);
    // A PROBE carries no frame: inner_length must be 0.
    bytes probe = ex::probe_packet();
    store_be16(&probe[laps_at + laps_off::inner_length], 1);
    EXPECT_EQ(error_of(probe), parse_error::bad_inner_length);
    // ACK and PROBE_ACK use the two bytes for time_echo: any value parses.
    bytes ack = ex::ack_packet();
    store_be16(&ack[laps_at + laps_off::time_echo], 0xBEEF);
    const auto parsed = parse_exact(ack, ack.size());
    ASSERT_EQ(parsed.error, parse_error::ok);
    EXPECT_EQ(parsed.packet.header.time_echo, 0xBEEF);
    EXPECT_EQ(parsed.packet.header.inner_length, 0);
}

TEST(wire_parse, unknown_flags_are_ignored)
{
    bytes p = ex::ack_packet();
    p[laps_at + laps_off::flags] = 0xF1; // all but RETRANSMIT, AUTHENTICATED (a trailer) and PULL
    const parse_result r = parse(p);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.packet.header.flags, flag_ecn_echo);
}

TEST(wire_parse, outer_header_errors)
{
    const bytes data = ex::data_packet();
    auto with = [&](std::size_t off, std::uint8_t v) {
        bytes p = data;
        p[off] = v;
        return p;
    };
    EXPECT_EQ(error_of(with(outer_off::eth_type, 0x86)), parse_error::not_ipv4);
    EXPECT_EQ(error_of(with(outer_off::ip_version_ihl, 0x65)), parse_error::bad_ipv4_header);
    EXPECT_EQ(error_of(with(outer_off::ip_version_ihl, 0x44)), parse_error::bad_ipv4_header);
    EXPECT_EQ(error_of(with(outer_off::ip_version_ihl, 0x40)), parse_error::bad_ipv4_header);
    EXPECT_EQ(error_of(with(outer_off::ip_protocol, 6)), parse_error::not_udp);
    EXPECT_EQ(error_of(with(outer_off::ip_flags_fragment, 0x20)), parse_error::ipv4_fragment);
    EXPECT_EQ(error_of(with(outer_off::ip_flags_fragment + 1, 0x01)), parse_error::ipv4_fragment);
    EXPECT_EQ(error_of(with(outer_off::udp_dst_port, 0x12)), parse_error::wrong_udp_port);

    bytes short_ip = data;
    store_be16(&short_ip[outer_off::ip_total_length], 19);
    EXPECT_EQ(error_of(short_ip), parse_error::bad_ipv4_header);
    bytes long_ip = data;
    store_be16(&long_ip[outer_off::ip_total_length], static_cast<std::uint16_t>(data.size() - 13));
    EXPECT_EQ(error_of(long_ip), parse_error::truncated_ipv4);
    bytes no_udp = data;
    store_be16(&no_udp[outer_off::ip_total_length], 27);
    EXPECT_EQ(error_of(no_udp), parse_error::truncated_udp);
    // IHL 15 (60 bytes of "options") reaching into the payload: parsed as
    // options, and the UDP header then is garbage with the wrong port.
    EXPECT_EQ(error_of(with(outer_off::ip_version_ihl, 0x4F)), parse_error::wrong_udp_port);

    for (std::uint16_t len : {0, 7, 89, 91, 0xFFFF}) {
        bytes p = data;
        store_be16(&p[outer_off::udp_length], len);
        EXPECT_EQ(error_of(p), parse_error::bad_udp_length) << len;
    }
}

TEST(wire_parse, foreign_traffic_is_recognised)
{
    EXPECT_TRUE(is_foreign(parse_error::not_ipv4));
    EXPECT_TRUE(is_foreign(parse_error::not_udp));
    EXPECT_TRUE(is_foreign(parse_error::wrong_udp_port));
    EXPECT_TRUE(is_foreign(parse_error::ipv4_fragment));
    EXPECT_FALSE(is_foreign(parse_error::truncated_laps));
    EXPECT_FALSE(is_foreign(parse_error::ok));

    const bytes arp = test::packet_builder().ethertype(test::ethertype_arp).payload(28).build();
    EXPECT_EQ(error_of(arp), parse_error::not_ipv4);
    const bytes v6 = test::packet_builder().ipv6("fd00::1", "fd00::2").udp(1, 19521).payload(40).build();
    EXPECT_EQ(error_of(v6), parse_error::not_ipv4);
    const bytes tcp = test::packet_builder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 19521).build();
    EXPECT_EQ(error_of(tcp), parse_error::not_udp);
    const bytes vxlan = test::packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 4789).payload(30).build();
    EXPECT_EQ(error_of(vxlan), parse_error::wrong_udp_port);
}

TEST(wire_parse, other_udp_port)
{
    const bytes p = ex::data_packet();
    EXPECT_EQ(parse(p, 19522).error, parse_error::wrong_udp_port);
    outer_config cfg = ex::sender_config();
    cfg.udp_port = 19522;
    const bytes moved = ex::encode(cfg, ex::data_spec(), ex::host_frame());
    EXPECT_TRUE(parse(moved, 19522).ok());
    EXPECT_EQ(parse(moved).error, parse_error::wrong_udp_port);
}

bytes tagged(const bytes& p, std::uint16_t tpid)
{
    bytes out(p.begin(), p.begin() + 12);
    out.push_back(static_cast<std::uint8_t>(tpid >> 8));
    out.push_back(static_cast<std::uint8_t>(tpid));
    out.push_back(0x20); // PCP 1, VLAN 0x064
    out.push_back(0x64);
    out.insert(out.end(), p.begin() + 12, p.end());
    return out;
}

TEST(wire_parse, one_vlan_tag_is_accepted)
{
    for (std::uint16_t tpid : {0x8100, 0x88A8}) {
        const bytes p = tagged(ex::data_packet(), tpid);
        const parse_result r = parse(p);
        ASSERT_TRUE(r.ok()) << to_string(r.error);
        EXPECT_TRUE(r.packet.vlan);
        EXPECT_EQ(r.packet.vlan_tci, 0x2064);
        EXPECT_EQ(r.packet.laps_offset, 46);
        EXPECT_EQ(r.packet.inner_offset, 82);
        EXPECT_EQ(r.packet.frame_length, p.size());
        const auto inner = r.packet.inner(p);
        EXPECT_EQ(bytes(inner.begin(), inner.end()), ex::host_frame());
        for (std::size_t n = ether_size; n < ether_size + vlan_size; ++n) {
            EXPECT_EQ(parse_exact(p, n).error, parse_error::truncated_vlan) << n;
        }
    }
    // Two tags: not LAPS version 1.
    EXPECT_EQ(error_of(tagged(tagged(ex::data_packet(), 0x8100), 0x88A8)), parse_error::not_ipv4);
}

TEST(wire_parse, ipv4_options_are_skipped)
{
    // Rebuild the example with 8 bytes of outer IPv4 options (NOP NOP ... EOL).
    const bytes p = ex::data_packet();
    bytes o(p.begin(), p.begin() + outer_off::udp);
    o.insert(o.end(), {1, 1, 1, 1, 1, 1, 1, 0});
    o.insert(o.end(), p.begin() + outer_off::udp, p.end());
    o[outer_off::ip_version_ihl] = 0x47;
    store_be16(&o[outer_off::ip_total_length], static_cast<std::uint16_t>(o.size() - ether_size));
    const parse_result r = parse(o);
    ASSERT_TRUE(r.ok()) << to_string(r.error);
    EXPECT_EQ(r.packet.laps_offset, 50);
    for (std::size_t n = outer_off::udp; n < outer_off::udp + 8; ++n) {
        EXPECT_EQ(parse_exact(o, n).error, parse_error::truncated_ipv4) << n;
    }
}

TEST(wire_parse, pid_range_is_checked_for_answers_only)
{
    // ACK pid 0x0102 = 258 indexes our PIT.
    EXPECT_EQ(error_of(ex::ack_packet(), 258), parse_error::pid_out_of_range);
    EXPECT_EQ(error_of(ex::ack_packet(), 259), parse_error::ok);
    EXPECT_EQ(error_of(ex::ack_packet(), 0), parse_error::ok); // 0: not checked
    EXPECT_EQ(error_of(ex::probe_ack_packet(), 3), parse_error::pid_out_of_range);
    // DATA/PROBE pids are the sender's: only echoed, never range-checked.
    EXPECT_EQ(error_of(ex::data_packet(), 1), parse_error::ok);
    EXPECT_EQ(error_of(ex::probe_packet(), 1), parse_error::ok);

    const laps_header ack = parse(ex::ack_packet()).packet.header;
    EXPECT_TRUE(pid_in_range(ack, 259));
    EXPECT_FALSE(pid_in_range(ack, 258));
}

TEST(wire_parse, parse_head_reads_only_the_head)
{
    const bytes p = ex::data_packet();
    // Enough head: same result as the whole frame.
    const parse_result r = parse_head({p.data(), parse_window}, p.size());
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.packet.header, parse(p).packet.header);
    // A head shorter than promised fails as truncated instead of reading on.
    for (std::size_t n = 0; n < 74; ++n) {
        std::unique_ptr<std::uint8_t[]> head(new std::uint8_t[n == 0 ? 1 : n]);
        std::copy_n(p.begin(), n, head.get());
        const parse_result h = parse_head({head.get(), n}, p.size());
        EXPECT_FALSE(h.ok()) << n;
    }
}

// The fast path (a few masked word compares for the usual packet) must give
// exactly what the field-by-field parser gives, on valid packets and on any
// corruption of them: same error, and when accepted the same fields.
TEST(wire_parse, fast_path_agrees_with_the_general_parser_on_mutations)
{
    std::mt19937 rng(20261126);
    const std::array<bytes, 5> packets{ex::data_packet(), ex::ack_packet(), ex::probe_packet(),
                                       ex::probe_ack_packet(), ex::ack_run_packet()};
    std::size_t accepted = 0;
    std::size_t rejected = 0;
    for (int round = 0; round < 40000; ++round) {
        const test::mutated m = test::mutate(packets[static_cast<std::size_t>(round) % packets.size()], 90, rng);
        const bytes& p = m.data;
        const std::size_t frame = m.frame;
        const std::size_t head = m.head;
        const std::size_t pit = rng() % 3 == 0 ? 1 + rng() % 600 : 0;
        parsed_packet fast;
        parsed_packet general;
        const parse_error a = parse_head({p.data(), head}, frame, default_udp_port, pit, fast);
        const parse_error b = parse_head_general({p.data(), head}, frame, default_udp_port, pit, general);
        ASSERT_EQ(a, b) << "round " << round;
        if (a != parse_error::ok) {
            ++rejected;
            continue;
        }
        ++accepted;
        ASSERT_EQ(fast.header, general.header) << "round " << round;
        ASSERT_EQ(fast.vlan, general.vlan);
        ASSERT_EQ(fast.src_ip, general.src_ip);
        ASSERT_EQ(fast.dst_ip, general.dst_ip);
        ASSERT_EQ(fast.src_port, general.src_port);
        ASSERT_EQ(fast.tos, general.tos);
        ASSERT_EQ(fast.ttl, general.ttl);
        ASSERT_EQ(fast.laps_offset, general.laps_offset);
        ASSERT_EQ(fast.inner_offset, general.inner_offset);
        ASSERT_EQ(fast.frame_length, general.frame_length);
    }
    // Both outcomes are exercised in quantity.
    EXPECT_GT(accepted, 10000u);
    EXPECT_GT(rejected, 10000u);
}

// parse_window covers the longest headers the parser accepts: an 802.1Q
// tag, IPv4 with 40 bytes of options and four anchors. Their head alone
// parses (what mbuf_parse copies from a chain); one byte less is truncated.
TEST(wire_parse, parse_window_holds_the_longest_headers)
{
    wire::packet_spec spec = ex::data_spec();
    const std::array<std::uint32_t, max_anchors> anchors{1, 2, 3, 4};
    ASSERT_TRUE(spec.header.set_anchors(anchors));
    spec.header.flags |= flag_authenticated; // the authentication trailer too: the longest headers

    const bytes inner = ex::host_frame();
    bytes p = ex::encode(ex::sender_config(), spec, inner);
    // An 802.1Q tag after the MACs, 40 bytes of IPv4 options (NOPs) after
    // the IPv4 header; IHL and total length follow.
    const std::array<std::uint8_t, vlan_size> tag{0x81, 0x00, 0x00, 0x07};
    p.insert(p.begin() + 12, tag.begin(), tag.end());
    constexpr std::size_t ip = ether_size + vlan_size;
    p.insert(p.begin() + ip + ipv4_size, 40, 0x01);
    p[ip] = 0x4F;
    store_be16(&p[ip + 2], static_cast<std::uint16_t>(load_be16(&p[ip + 2]) + 40));
    ASSERT_TRUE(parse(p).ok()) << to_string(parse(p).error);
    const std::size_t headers = ip + 60 + udp_size + laps_max_size + auth_size;
    // The window also holds an ACK_RUN's longest run block (test_ack_run.cpp).
    EXPECT_EQ(headers + run_block_size(max_run_entries), parse_window);
    const parse_result head = parse_head({p.data(), headers}, p.size());
    ASSERT_TRUE(head.ok()) << to_string(head.error);
    EXPECT_EQ(head.packet.header, parse(p).packet.header);
    EXPECT_EQ(parse_head({p.data(), headers - 1}, p.size()).error, parse_error::truncated_laps);
}

TEST(wire_parse, error_names_are_counter_names)
{
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < parse_error_count; ++i) {
        const std::string_view n = to_string(static_cast<parse_error>(i));
        EXPECT_TRUE(n.starts_with("parse_")) << n;
        EXPECT_NE(n, "parse_unknown");
        names.insert(n);
    }
    EXPECT_EQ(names.size(), parse_error_count);
    EXPECT_EQ(to_string(parse_error::truncated_ipv4), "parse_truncated_ipv4");
    EXPECT_EQ(to_string(parse_error::wrong_udp_port), "parse_wrong_udp_port");
}

TEST(wire_parse, random_corruption_never_reads_out_of_bounds)
{
    std::mt19937 rng(12345);
    std::size_t accepted = 0;
    for (const auto& e : ex::all()) {
        for (int round = 0; round < 3000; ++round) {
            bytes p = e.packet;
            const int flips = 1 + static_cast<int>(rng() % 4);
            for (int i = 0; i < flips; ++i) {
                p[rng() % p.size()] = static_cast<std::uint8_t>(rng());
            }
            p.resize(p.size() - rng() % 8);
            const parse_result r = parse_exact(p, p.size());
            if (r.ok()) {
                ++accepted;
                const parsed_packet& q = r.packet;
                EXPECT_LE(q.header.anchor_count, max_anchors);
                EXPECT_LE(q.header.anchor_index, q.header.anchor_count);
                EXPECT_LE(q.frame_length, p.size());
                EXPECT_LE(q.inner_offset + std::size_t{q.header.inner_length}, q.frame_length);
            }
        }
    }
    EXPECT_GT(accepted, 0u); // flips in payload bytes keep packets valid
}

} // namespace
} // namespace laps::wire
