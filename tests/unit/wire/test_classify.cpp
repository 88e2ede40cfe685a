// Host-frame classification: destination, flow key, and every failure.
#include "tests/unit/wire/mutate.hpp"
#include "tests/unit/wire/packet_builder.hpp"
#include "wire/classify.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <unordered_set>

namespace laps::wire {
namespace {

using test::bytes;
using test::packet_builder;

tables::address addr(std::string_view text)
{
    return *tables::address::parse(text);
}

classification classify_exact(const bytes& p, std::size_t n)
{
    std::unique_ptr<std::uint8_t[]> copy(new std::uint8_t[n == 0 ? 1 : n]);
    std::copy_n(p.begin(), n, copy.get());
    return classify({copy.get(), n});
}

TEST(wire_classify, udp_five_tuple)
{
    const bytes f = packet_builder().ipv4("192.168.1.10", "192.168.2.20").tos(0x2E).udp(1000, 2000).payload(20).build();
    const classification c = classify(f);
    ASSERT_TRUE(c.ok()) << to_string(c.status);
    EXPECT_EQ(c.destination, addr("192.168.2.20"));
    EXPECT_TRUE(c.destination.is_ipv4());
    EXPECT_EQ(c.key.src, addr("192.168.1.10"));
    EXPECT_EQ(c.key.dst, addr("192.168.2.20"));
    EXPECT_EQ(c.key.protocol, 17);
    EXPECT_EQ(c.key.src_port, 1000);
    EXPECT_EQ(c.key.dst_port, 2000);
    EXPECT_EQ(c.key.qp, 0u);
    EXPECT_EQ(c.key.kind, flow_kind::five_tuple);
    EXPECT_EQ(c.ip_version, 4);
    EXPECT_EQ(c.traffic_class, 0x2E);
    EXPECT_EQ(c.l3_offset, 14);
    EXPECT_EQ(c.l4_offset, 34);
    EXPECT_FALSE(c.vlan);
}

TEST(wire_classify, tcp_five_tuple)
{
    const bytes f = packet_builder().ipv4("10.1.0.1", "10.2.0.2").tcp(40000, 443).payload(100).build();
    const classification c = classify(f);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.key.protocol, 6);
    EXPECT_EQ(c.key.src_port, 40000);
    EXPECT_EQ(c.key.dst_port, 443);
    EXPECT_EQ(c.key.kind, flow_kind::five_tuple);
}

TEST(wire_classify, rocev2_is_keyed_by_destination_qp)
{
    auto frame = [](std::uint32_t qp) {
        return packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(49152, 4791).bth(qp).payload(64).build();
    };
    const classification a = classify(frame(0xABCDEF));
    ASSERT_TRUE(a.ok()) << to_string(a.status);
    EXPECT_EQ(a.key.kind, flow_kind::rocev2);
    EXPECT_EQ(a.key.qp, 0xABCDEFu);
    EXPECT_EQ(a.key.dst_port, 4791);
    const classification b = classify(frame(0x000011));
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b.key.qp, 0x11u);
    EXPECT_NE(a.key, b.key) << "same 5-tuple, different QPs: different flows";
    EXPECT_NE(flow_hash(a.key), flow_hash(b.key));

    const bytes short_bth = packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(49152, 4791).payload(11).build();
    EXPECT_EQ(classify(short_bth).status, classify_status::truncated_bth);
    // RoCEv2 is a destination port: traffic *from* 4791 is plain UDP.
    const bytes reverse = packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(4791, 1234).payload(4).build();
    EXPECT_EQ(classify(reverse).key.kind, flow_kind::five_tuple);
}

TEST(wire_classify, other_protocols_use_three_tuples)
{
    const bytes icmp = packet_builder().ipv4("10.0.0.1", "10.0.0.2").protocol(test::ip_proto_icmp).payload(8).build();
    const classification c = classify(icmp);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.key.kind, flow_kind::three_tuple);
    EXPECT_EQ(c.key.protocol, 1);
    EXPECT_EQ(c.key.src_port, 0);
    EXPECT_EQ(c.key.dst_port, 0);
    EXPECT_EQ(c.l4_offset, 0);
}

TEST(wire_classify, ipv4_fragments_all_use_the_three_tuple)
{
    const bytes first = packet_builder().ipv4("10.0.0.1", "10.0.0.2").ipv4_fragment(0x2000).udp(5, 6).payload(16).build();
    const bytes later = packet_builder().ipv4("10.0.0.1", "10.0.0.2").ipv4_fragment(0x0003).protocol(17).payload(16).build();
    const classification a = classify(first);
    const classification b = classify(later);
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(a.key.kind, flow_kind::three_tuple);
    EXPECT_EQ(a.key, b.key);
}

TEST(wire_classify, ipv6)
{
    const bytes f = packet_builder().ipv6("fd00::1", "fd00:1::2").tos(0xB8).udp(7000, 8000).payload(10).build();
    const classification c = classify(f);
    ASSERT_TRUE(c.ok()) << to_string(c.status);
    EXPECT_EQ(c.ip_version, 6);
    EXPECT_EQ(c.destination, addr("fd00:1::2"));
    EXPECT_FALSE(c.destination.is_ipv4());
    EXPECT_EQ(c.key.src, addr("fd00::1"));
    EXPECT_EQ(c.key.src_port, 7000);
    EXPECT_EQ(c.key.dst_port, 8000);
    EXPECT_EQ(c.traffic_class, 0xB8);
    EXPECT_EQ(c.l4_offset, 54);
}

TEST(wire_classify, ipv6_extension_headers_and_fragments)
{
    const bytes f = packet_builder()
                        .ipv6("fd00::1", "fd00::2")
                        .ipv6_extension(0)
                        .ipv6_extension(60, 16)
                        .tcp(1, 2)
                        .build();
    const classification c = classify(f);
    ASSERT_TRUE(c.ok()) << to_string(c.status);
    EXPECT_EQ(c.key.protocol, 6);
    EXPECT_EQ(c.key.dst_port, 2);
    EXPECT_EQ(c.l4_offset, 14 + 40 + 8 + 16);

    const bytes atomic = packet_builder().ipv6("fd00::1", "fd00::2").ipv6_fragment(0).udp(3, 4).build();
    EXPECT_EQ(classify(atomic).key.kind, flow_kind::five_tuple) << "offset 0, M 0: whole datagram";
    const bytes frag = packet_builder().ipv6("fd00::1", "fd00::2").ipv6_fragment(0x0001).udp(3, 4).build();
    const classification fc = classify(frag);
    ASSERT_TRUE(fc.ok());
    EXPECT_EQ(fc.key.kind, flow_kind::three_tuple);
    EXPECT_EQ(fc.key.protocol, 17);

    packet_builder long_chain;
    long_chain.ipv6("fd00::1", "fd00::2");
    for (int i = 0; i < 9; ++i) {
        long_chain.ipv6_extension(60);
    }
    EXPECT_EQ(classify(long_chain.udp(1, 2).build()).status, classify_status::bad_ipv6_header);
}

TEST(wire_classify, vlan)
{
    const bytes f = packet_builder().vlan(0x0123).ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).build();
    const classification c = classify(f);
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(c.vlan);
    EXPECT_EQ(c.vlan_tci, 0x0123);
    EXPECT_EQ(c.l3_offset, 18);
    EXPECT_EQ(c.l4_offset, 38);
    EXPECT_EQ(c.key, classify(packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).build()).key);

    const bytes v6 = packet_builder().vlan(7).ipv6("fd00::1", "fd00::2").udp(1, 2).build();
    EXPECT_TRUE(classify(v6).ok());
}

TEST(wire_classify, non_ip_is_its_own_result)
{
    const bytes arp = packet_builder().ethertype(test::ethertype_arp).payload(28).build();
    EXPECT_EQ(classify(arp).status, classify_status::not_ip);
    const bytes lldp = packet_builder().ethertype(0x88CC).payload(40).build();
    EXPECT_EQ(classify(lldp).status, classify_status::not_ip);
    const bytes vlan_arp = packet_builder().vlan(5).ethertype(test::ethertype_arp).payload(28).build();
    EXPECT_EQ(classify(vlan_arp).status, classify_status::not_ip);
    const bytes qinq_arp = packet_builder().vlan(5, 0x88A8).ethertype(0x8100).payload(28).build();
    EXPECT_EQ(classify(qinq_arp).status, classify_status::not_ip);
}

// docs/app.md "Host frames": QinQ (an 802.1ad service tag, then an 802.1Q tag) is parsed like
// a single tag: the inner IP frame is classified and sprayed; three tags are
// not IP to laps.
TEST(wire_classify, qinq_is_parsed_like_a_single_tag)
{
    const bytes single = packet_builder().vlan(0x0123).ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).build();
    bytes qinq = single;
    const std::uint8_t service_tag[] = {0x88, 0xA8, 0x00, 0x05};
    qinq.insert(qinq.begin() + 12, std::begin(service_tag), std::end(service_tag));
    const classification c = classify(qinq);
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(c.vlan);
    EXPECT_EQ(c.vlan_tci, 5) << "the outer (service) tag";
    EXPECT_EQ(c.l3_offset, 22);
    EXPECT_EQ(c.key, classify(single).key);

    bytes three = qinq;
    const std::uint8_t another[] = {0x81, 0x00, 0x00, 0x09};
    three.insert(three.begin() + 16, std::begin(another), std::end(another));
    EXPECT_EQ(classify(three).status, classify_status::not_ip);
    bytes cut = qinq;
    cut.resize(20);
    EXPECT_EQ(classify(cut).status, classify_status::truncated_vlan);
}

TEST(wire_classify, malformed_headers)
{
    bytes v = packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).build();
    v[14] = 0x55; // version 5
    EXPECT_EQ(classify(v).status, classify_status::bad_ipv4_header);
    v[14] = 0x44; // IHL 4
    EXPECT_EQ(classify(v).status, classify_status::bad_ipv4_header);
    bytes tl = packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).build();
    tl[16] = 0;
    tl[17] = 10; // total length < header
    EXPECT_EQ(classify(tl).status, classify_status::bad_ipv4_header);
    tl[17] = 27; // ends inside the UDP header
    EXPECT_EQ(classify(tl).status, classify_status::truncated_l4);
    tl[17] = 200; // beyond the frame
    EXPECT_EQ(classify(tl).status, classify_status::truncated_ipv4);

    bytes v6 = packet_builder().ipv6("fd00::1", "fd00::2").udp(1, 2).build();
    v6[14] = 0x40;
    EXPECT_EQ(classify(v6).status, classify_status::bad_ipv6_header);
    bytes jumbo = packet_builder().ipv6("fd00::1", "fd00::2").udp(1, 2).build();
    jumbo[18] = 0;
    jumbo[19] = 0;
    EXPECT_EQ(classify(jumbo).status, classify_status::bad_ipv6_header);
}

TEST(wire_classify, ethernet_padding_is_allowed)
{
    bytes f = packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).build(); // 42 bytes
    f.resize(60, 0);
    EXPECT_TRUE(classify(f).ok());
}

// Every prefix of a frame fails with the reason of the layer it cuts, and
// never reads past it (exact-size heap copies, for ASan and valgrind). Past
// the L2 header, the IP length field always claims more than the prefix holds.
void expect_prefixes(const bytes& f, std::size_t l3, classify_status ip_truncated)
{
    for (std::size_t n = 0; n < f.size(); ++n) {
        const classify_status want = n < 14   ? classify_status::truncated_ethernet
                                     : n < l3 ? classify_status::truncated_vlan
                                              : ip_truncated;
        EXPECT_EQ(classify_exact(f, n).status, want) << "cut at " << n;
    }
    EXPECT_TRUE(classify_exact(f, f.size()).ok());
}

TEST(wire_classify, every_prefix_is_truncated)
{
    expect_prefixes(packet_builder().vlan(1).ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload(5).build(),
                    18, classify_status::truncated_ipv4);
    expect_prefixes(packet_builder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2).build(), 14,
                    classify_status::truncated_ipv4);
    expect_prefixes(packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 4791).bth(5).build(), 14,
                    classify_status::truncated_ipv4);
    expect_prefixes(packet_builder().ipv6("fd00::1", "fd00::2").ipv6_extension(0).udp(1, 2).build(),
                    14, classify_status::truncated_ipv6);
}

TEST(wire_classify, consistent_cuts_fail_at_the_transport)
{
    // IP lengths that agree with the cut: the transport header is what is short.
    const bytes udp = packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).build();
    for (std::size_t n = 34; n < 42; ++n) {
        bytes f(udp.begin(), udp.begin() + static_cast<std::ptrdiff_t>(n));
        f[17] = static_cast<std::uint8_t>(n - 14);
        EXPECT_EQ(classify_exact(f, n).status, classify_status::truncated_l4) << n;
    }
    const bytes roce = packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 4791).bth(5).build();
    for (std::size_t n = 42; n < 54; ++n) {
        bytes f(roce.begin(), roce.begin() + static_cast<std::ptrdiff_t>(n));
        f[17] = static_cast<std::uint8_t>(n - 14);
        EXPECT_EQ(classify_exact(f, n).status, classify_status::truncated_bth) << n;
    }
    const bytes v6 = packet_builder().ipv6("fd00::1", "fd00::2").ipv6_extension(0).tcp(1, 2).build();
    for (std::size_t n = 55; n < 82; ++n) { // 54: payload length 0, a jumbogram
        bytes f(v6.begin(), v6.begin() + static_cast<std::ptrdiff_t>(n));
        f[19] = static_cast<std::uint8_t>(n - 54);
        EXPECT_EQ(classify_exact(f, n).status,
                  n < 62 ? classify_status::truncated_ipv6 : classify_status::truncated_l4)
            << n;
    }
}

TEST(wire_classify, classify_head_reads_only_the_head)
{
    const bytes f = packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 4791).bth(5).payload(500).build();
    const classification whole = classify(f);
    ASSERT_TRUE(whole.ok());
    const classification head = classify_head({f.data(), classify_window}, f.size());
    ASSERT_TRUE(head.ok());
    EXPECT_EQ(head.key, whole.key);
    for (std::size_t n = 0; n < 54; ++n) {
        std::unique_ptr<std::uint8_t[]> h(new std::uint8_t[n == 0 ? 1 : n]);
        std::copy_n(f.begin(), n, h.get());
        EXPECT_FALSE(classify_head({h.get(), n}, f.size()).ok()) << n;
    }
}

TEST(wire_classify, flow_key_is_hash_ready)
{
    // Same flow from two different buffers: same bytes, same hash.
    const auto a = classify(packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload(3).build());
    const auto b = classify(packet_builder().ipv4("10.0.0.1", "10.0.0.2").ttl(3).udp(1, 2).payload(99).build());
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(std::memcmp(&a.key, &b.key, sizeof(flow_key)), 0);
    EXPECT_EQ(flow_hash(a.key), flow_hash(b.key));
    EXPECT_EQ(flow_key_hasher{}(a.key), flow_hash(a.key));
    EXPECT_NE(flow_hash(a.key), flow_hash(a.key, 1)) << "seeded";

    // Distinct 5-tuples spread: no collisions among a few thousand.
    std::unordered_set<std::uint32_t> hashes;
    for (std::uint16_t port = 1; port <= 4000; ++port) {
        const auto c = classify(packet_builder().ipv4("10.0.0.1", "10.0.0.2").udp(port, 2).build());
        hashes.insert(flow_hash(c.key));
    }
    EXPECT_EQ(hashes.size(), 4000u);
}

TEST(wire_classify, random_corruption_never_reads_out_of_bounds)
{
    std::mt19937 rng(99);
    const std::vector<bytes> seeds = {
        packet_builder().vlan(3).ipv4("10.0.0.1", "10.0.0.2").udp(1, 4791).bth(5).payload(8).build(),
        packet_builder().ipv6("fd00::1", "fd00::2").ipv6_extension(0).ipv6_fragment(0).tcp(1, 2).build(),
    };
    for (const bytes& seed : seeds) {
        for (int round = 0; round < 5000; ++round) {
            bytes f = seed;
            for (int i = 0; i < 3; ++i) {
                f[rng() % f.size()] = static_cast<std::uint8_t>(rng());
            }
            f.resize(f.size() - rng() % 10);
            const classification c = classify_exact(f, f.size());
            if (c.ok()) {
                EXPECT_LE(c.l4_offset, f.size());
            }
        }
    }
}

// The fast path (untagged IPv4 TCP/UDP) must give exactly what the general
// classifier gives, on valid frames and on any corruption of them.
TEST(wire_classify, fast_path_agrees_with_the_general_classifier_on_mutations)
{
    std::mt19937 rng(20261126);
    const std::array<bytes, 5> frames{
        packet_builder().eth({2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1}).ipv4("10.0.0.1", "10.0.0.2").udp(1000, 5000).payload("x").build(),
        packet_builder().eth({2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1}).ipv4("10.0.0.1", "10.9.0.2").tcp(40000, 443).payload("hello").build(),
        packet_builder().eth({2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1}).ipv4("10.0.0.1", "10.0.0.2").udp(1000, 4791).payload(std::string(16, 'b')).build(),
        packet_builder().eth({2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1}).ipv4("10.0.0.1", "10.0.0.2").udp(1000, 9).build(),
        packet_builder().eth({2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1}).ipv4("10.0.0.1", "10.0.0.3").tcp(1, 2).build(),
    };
    std::size_t accepted = 0;
    std::size_t rejected = 0;
    for (int round = 0; round < 40000; ++round) {
        const test::mutated m = test::mutate(frames[static_cast<std::size_t>(round) % frames.size()], 60, rng);
        const bytes& f = m.data;
        const std::size_t frame = m.frame;
        const std::size_t head = m.head;
        classification fast;
        classification general;
        const classify_status a = classify_head({f.data(), head}, frame, fast);
        const classify_status b = classify_head_general({f.data(), head}, frame, general);
        ASSERT_EQ(a, b) << "round " << round;
        ASSERT_EQ(fast.status, general.status);
        if (a != classify_status::ok) {
            ++rejected;
            continue;
        }
        ++accepted;
        ASSERT_EQ(fast.key, general.key) << "round " << round;
        ASSERT_EQ(fast.destination, general.destination);
        ASSERT_EQ(fast.ip_version, general.ip_version);
        ASSERT_EQ(fast.traffic_class, general.traffic_class);
        ASSERT_EQ(fast.vlan, general.vlan);
        ASSERT_EQ(fast.vlan_tci, general.vlan_tci);
        ASSERT_EQ(fast.l3_offset, general.l3_offset);
        ASSERT_EQ(fast.l4_offset, general.l4_offset);
    }
    EXPECT_GT(accepted, 10000u);
    EXPECT_GT(rejected, 5000u);
}

TEST(wire_classify, status_names_are_counter_names)
{
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < classify_status_count; ++i) {
        const std::string_view n = to_string(static_cast<classify_status>(i));
        EXPECT_TRUE(n.starts_with("classify_")) << n;
        EXPECT_NE(n, "classify_unknown");
        names.insert(n);
    }
    EXPECT_EQ(names.size(), classify_status_count);
}

} // namespace
} // namespace laps::wire
