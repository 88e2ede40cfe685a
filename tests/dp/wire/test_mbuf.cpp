// wire/ on real mbufs (EAL --no-huge, from dp_main). Every test ends with both
// pools full again: nothing leaks, nothing is freed twice.
#include "common/rng.hpp"
#include "tests/unit/wire/examples.hpp"
#include "wire/mbuf_build.hpp"
#include "wire/mbuf_encap.hpp"
#include "wire/mbuf_parse.hpp"
#include "wire/bytes.hpp"
#include "wire/key_hash.hpp"
#include "wire/stamp.hpp"

#include <gtest/gtest.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <array>
#include <string>
#include <tuple>
#include <vector>

namespace laps::wire {
namespace {

namespace ex = test::wire_examples;
using test::bytes;

constexpr unsigned pool_size = 255;
constexpr unsigned header_pool_size = 63;

class wire_mbuf : public ::testing::Test {
protected:
    void SetUp() override
    {
        static int instance = 0;
        const std::string id = std::to_string(instance++);
        _pool = rte_pktmbuf_pool_create(("wire_pool_" + id).c_str(), pool_size, 0, 0,
                                        RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
        _headers = rte_pktmbuf_pool_create(("wire_hdr_" + id).c_str(), header_pool_size, 0, 0,
                                           header_mbuf_data_room, SOCKET_ID_ANY);
        ASSERT_NE(_pool, nullptr);
        ASSERT_NE(_headers, nullptr);
    }

    void TearDown() override
    {
        EXPECT_EQ(rte_mempool_avail_count(_pool), pool_size) << "mbuf leak";
        EXPECT_EQ(rte_mempool_avail_count(_headers), header_pool_size) << "header mbuf leak";
        rte_mempool_free(_pool);
        rte_mempool_free(_headers);
    }

    // `data` in one mbuf, or in segments of the given sizes (the last takes the rest).
    rte_mbuf* mbuf_of(const bytes& data, std::vector<std::size_t> split = {})
    {
        rte_mbuf* head = nullptr;
        std::size_t off = 0;
        split.push_back(data.size());
        for (std::size_t cut : split) {
            const std::size_t n = std::min(cut, data.size() - off);
            rte_mbuf* m = rte_pktmbuf_alloc(_pool);
            EXPECT_NE(m, nullptr);
            char* p = rte_pktmbuf_append(m, static_cast<std::uint16_t>(n));
            EXPECT_NE(p, nullptr);
            std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(off), n, p);
            off += n;
            if (head == nullptr) {
                head = m;
            } else {
                EXPECT_EQ(rte_pktmbuf_chain(head, m), 0);
            }
            if (off == data.size()) {
                break;
            }
        }
        return head;
    }

    static bytes bytes_of(const rte_mbuf* m)
    {
        bytes out(rte_pktmbuf_pkt_len(m));
        const void* p = rte_pktmbuf_read(m, 0, static_cast<std::uint32_t>(out.size()), out.data());
        EXPECT_NE(p, nullptr);
        if (p != out.data()) {
            std::copy_n(static_cast<const std::uint8_t*>(p), out.size(), out.data());
        }
        return out;
    }

    rte_mempool* _pool = nullptr;
    rte_mempool* _headers = nullptr;
};

TEST_F(wire_mbuf, encapsulate_in_place_gives_the_golden_packet)
{
    rte_mbuf* m = mbuf_of(ex::host_frame());
    const std::uint16_t headroom = rte_pktmbuf_headroom(m);
    ASSERT_EQ(encapsulate(m, ex::sender_config(), ex::data_spec()), encap_error::ok);
    EXPECT_EQ(rte_pktmbuf_headroom(m), headroom - 78);
    EXPECT_EQ(bytes_of(m), ex::data_packet());
    EXPECT_EQ(m->l2_len, 14u);
    EXPECT_EQ(m->l3_len, 20u);
    rte_pktmbuf_free(m);
}

TEST_F(wire_mbuf, encapsulate_then_decapsulate_round_trips)
{
    const bytes host = test::packet_builder()
                           .vlan(42)
                           .ipv4("192.168.1.10", "192.168.2.20")
                           .udp(4000, 4791)
                           .bth(0x123456)
                           .payload(1000)
                           .build();
    for (std::size_t anchors = 0; anchors <= max_anchors; ++anchors) {
        rte_mbuf* m = mbuf_of(host);
        packet_spec s = ex::data_spec();
        const std::uint32_t list[] = {1, 2, 3, 4};
        s.header.set_anchors(std::span(list, anchors));
        ASSERT_EQ(encapsulate(m, ex::sender_config(), s), encap_error::ok);
        EXPECT_EQ(rte_pktmbuf_pkt_len(m), host.size() + headers_size(anchors));

        const parse_result r = parse(m);
        ASSERT_TRUE(r.ok()) << to_string(r.error);
        EXPECT_EQ(r.packet.header.anchor_count, anchors);
        EXPECT_EQ(r.packet.header.inner_length, host.size());
        ASSERT_EQ(decapsulate(m, r.packet), m);
        EXPECT_EQ(bytes_of(m), host);
        rte_pktmbuf_free(m);
    }
}

TEST_F(wire_mbuf, too_little_headroom_is_refused_and_changes_nothing)
{
    const bytes host = ex::host_frame();
    auto with_headroom = [&](std::uint16_t headroom) {
        rte_mbuf* m = rte_pktmbuf_alloc(_pool);
        EXPECT_NE(m, nullptr);
        m->data_off = headroom;
        std::copy(host.begin(), host.end(),
                  rte_pktmbuf_append(m, static_cast<std::uint16_t>(host.size())));
        return m;
    };
    rte_mbuf* short_room = with_headroom(77); // one byte short of 42 + 28 + 2 x 4
    EXPECT_EQ(encapsulate(short_room, ex::sender_config(), ex::data_spec()), encap_error::no_headroom);
    EXPECT_EQ(short_room->data_off, 77);
    EXPECT_EQ(bytes_of(short_room), host);
    rte_pktmbuf_free(short_room);

    rte_mbuf* exact = with_headroom(78);
    EXPECT_EQ(encapsulate(exact, ex::sender_config(), ex::data_spec()), encap_error::ok);
    EXPECT_EQ(exact->data_off, 0);
    EXPECT_EQ(bytes_of(exact), ex::data_packet());
    rte_pktmbuf_free(exact);
    EXPECT_EQ(to_string(encap_error::no_headroom), "encap_no_headroom");
}

TEST_F(wire_mbuf, refuses_bad_specs_mtu_and_short_frames)
{
    rte_mbuf* m = mbuf_of(ex::host_frame());
    packet_spec ack = ex::data_spec();
    ack.header.type = packet_type::ack;
    EXPECT_EQ(encapsulate(m, ex::sender_config(), ack), encap_error::bad_header);
    packet_spec many = ex::data_spec();
    many.header.anchor_count = 5;
    EXPECT_EQ(encapsulate(m, ex::sender_config(), many), encap_error::bad_header);

    outer_config cfg = ex::sender_config();
    cfg.mtu = 113; // the example's outer IPv4 packet is 114 bytes
    EXPECT_EQ(encapsulate(m, cfg, ex::data_spec()), encap_error::over_mtu);
    encap_error e = encap_error::ok;
    EXPECT_EQ(encapsulate_chained(m, _headers, cfg, ex::data_spec(), &e), nullptr);
    EXPECT_EQ(e, encap_error::over_mtu);
    cfg.mtu = 114;
    EXPECT_EQ(encapsulate(m, cfg, ex::data_spec()), encap_error::ok);
    rte_pktmbuf_free(m);

    rte_mbuf* tiny = mbuf_of(bytes(13, 0xAB));
    EXPECT_EQ(encapsulate(tiny, ex::sender_config(), ex::data_spec()), encap_error::bad_header);
    rte_pktmbuf_free(tiny);
}

TEST_F(wire_mbuf, chained_headers_leave_the_host_frame_untouched)
{
    const bytes host = ex::host_frame();
    rte_mbuf* frame = mbuf_of(host);
    encap_error e = encap_error::bad_header;
    rte_mbuf* first = encapsulate_chained(frame, _headers, ex::sender_config(), ex::data_spec(), &e);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(e, encap_error::ok);
    EXPECT_EQ(rte_mbuf_refcnt_read(frame), 2);
    EXPECT_EQ(first->nb_segs, 2);
    EXPECT_EQ(rte_pktmbuf_pkt_len(first), 128u);
    EXPECT_EQ(first->next, frame);
    EXPECT_EQ(first->pool, _headers);
    EXPECT_EQ(bytes_of(first), ex::data_packet());
    const char* reason = nullptr;
    EXPECT_EQ(rte_mbuf_check(first, 1, &reason), 0) << reason;

    // A resend while the first copy may still sit in a TX ring: new header
    // segment, new time and flags; the first copy's bytes do not change.
    packet_spec again = ex::data_spec();
    again.header = make_data_header(0x0105, 999, 7, 42, ex::data_anchors, true);
    rte_mbuf* second = encapsulate_chained(frame, _headers, ex::sender_config(), again);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(rte_mbuf_refcnt_read(frame), 3);
    EXPECT_EQ(bytes_of(first), ex::data_packet());
    const parse_result r = parse(second);
    ASSERT_TRUE(r.ok()) << to_string(r.error);
    EXPECT_EQ(r.packet.header.pid, 0x0105);
    EXPECT_TRUE(r.packet.header.has_flag(flag_retransmit));
    EXPECT_EQ(bytes_of(frame), host);

    // The TX path frees the chains; the engine's reference keeps the frame.
    rte_pktmbuf_free(first);
    rte_pktmbuf_free(second);
    EXPECT_EQ(rte_mbuf_refcnt_read(frame), 1);
    EXPECT_EQ(bytes_of(frame), host);
    EXPECT_EQ(rte_mempool_avail_count(_headers), header_pool_size);
    rte_pktmbuf_free(frame); // acknowledged
}

TEST_F(wire_mbuf, chained_headers_on_a_multi_segment_frame)
{
    const bytes host = test::packet_builder().ipv4("10.9.0.1", "10.9.0.2").tcp(1, 2).payload(3000).build();
    rte_mbuf* frame = mbuf_of(host, {1000, 1000});
    ASSERT_EQ(frame->nb_segs, 3);
    rte_mbuf* chain = encapsulate_chained(frame, _headers, ex::sender_config(), ex::data_spec());
    ASSERT_NE(chain, nullptr);
    EXPECT_EQ(chain->nb_segs, 4);
    for (rte_mbuf* seg = frame; seg != nullptr; seg = seg->next) {
        EXPECT_EQ(rte_mbuf_refcnt_read(seg), 2);
    }
    const parse_result r = parse(chain);
    ASSERT_TRUE(r.ok()) << to_string(r.error);
    EXPECT_EQ(r.packet.header.inner_length, host.size());
    const bytes all = bytes_of(chain);
    EXPECT_EQ(bytes(all.begin() + 78, all.end()), host);

    rte_pktmbuf_free(chain);
    for (rte_mbuf* seg = frame; seg != nullptr; seg = seg->next) {
        EXPECT_EQ(rte_mbuf_refcnt_read(seg), 1);
    }
    EXPECT_EQ(frame->nb_segs, 3);
    EXPECT_EQ(bytes_of(frame), host);
    rte_pktmbuf_free(frame);
}

TEST_F(wire_mbuf, empty_header_pool)
{
    std::vector<rte_mbuf*> taken(header_pool_size);
    ASSERT_EQ(rte_pktmbuf_alloc_bulk(_headers, taken.data(), header_pool_size), 0);
    rte_mbuf* frame = mbuf_of(ex::host_frame());
    encap_error e = encap_error::ok;
    EXPECT_EQ(encapsulate_chained(frame, _headers, ex::sender_config(), ex::data_spec(), &e), nullptr);
    EXPECT_EQ(e, encap_error::no_header_mbuf);
    EXPECT_EQ(rte_mbuf_refcnt_read(frame), 1);
    for (rte_mbuf* m : taken) {
        rte_pktmbuf_free(m);
    }
    rte_pktmbuf_free(frame);
}

TEST_F(wire_mbuf, parse_and_classify_multi_segment_mbufs)
{
    const bytes p = ex::data_packet();
    const parse_result linear = parse(p);
    ASSERT_TRUE(linear.ok());
    // Every cut: a first segment too short for the outer headers (copied
    // head) and one that holds them (parsed in place) give the same result.
    for (std::size_t first = 1; first < p.size(); ++first) {
        rte_mbuf* m = mbuf_of(p, {first, 7});
        const parse_result r = parse(m);
        ASSERT_TRUE(r.ok()) << first << ": " << to_string(r.error);
        EXPECT_EQ(r.packet.header, linear.packet.header) << first;
        EXPECT_EQ(r.packet.inner_offset, linear.packet.inner_offset) << first;
        EXPECT_EQ(r.packet.frame_length, linear.packet.frame_length) << first;
        EXPECT_EQ(r.packet.src_port, linear.packet.src_port) << first;
        rte_pktmbuf_free(m);
    }
    // A malformed one fails with the same reason at every cut.
    bytes bad = p;
    bad[outer_off::laps + laps_off::anchor_count] = max_anchors + 1;
    ASSERT_EQ(parse(bad).error, parse_error::too_many_anchors);
    for (std::size_t first = 1; first < bad.size(); ++first) {
        rte_mbuf* m = mbuf_of(bad, {first});
        EXPECT_EQ(parse(m).error, parse_error::too_many_anchors) << first;
        rte_pktmbuf_free(m);
    }
    const bytes host = test::packet_builder().ipv6("fd00::1", "fd00::2").udp(5, 4791).bth(77).payload(500).build();
    const classification whole = classify(std::span<const std::uint8_t>(host));
    ASSERT_TRUE(whole.ok());
    for (std::size_t first : {10, 60, 300}) {
        rte_mbuf* m = mbuf_of(host, {first});
        const classification c = classify(m);
        ASSERT_TRUE(c.ok()) << first << ": " << to_string(c.status);
        EXPECT_EQ(c.key, whole.key);
        EXPECT_EQ(c.destination, whole.destination);
        rte_pktmbuf_free(m);
    }
    // Truncated in the mbuf too.
    rte_mbuf* cut = mbuf_of(bytes(p.begin(), p.begin() + 60));
    EXPECT_EQ(parse(cut).error, parse_error::truncated_ipv4);
    rte_pktmbuf_free(cut);
}

TEST_F(wire_mbuf, nic_flagged_checksum_is_dropped)
{
    rte_mbuf* m = mbuf_of(ex::data_packet());
    m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_BAD;
    EXPECT_EQ(parse(m).error, parse_error::bad_ipv4_checksum);
    m->ol_flags = (m->ol_flags & ~RTE_MBUF_F_RX_IP_CKSUM_MASK) | RTE_MBUF_F_RX_IP_CKSUM_GOOD;
    EXPECT_TRUE(parse(m).ok());
    rte_pktmbuf_free(m);
}

TEST_F(wire_mbuf, decapsulate_trims_padding_and_needs_headers_in_one_segment)
{
    bytes padded = ex::data_packet();
    padded.resize(padded.size() + 6, 0); // an FCS or padding after the datagram
    rte_mbuf* m = mbuf_of(padded);
    parse_result r = parse(m);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(decapsulate(m, r.packet), m);
    EXPECT_EQ(bytes_of(m), ex::host_frame());
    rte_pktmbuf_free(m);

    rte_mbuf* seg = mbuf_of(ex::data_packet(), {80});
    r = parse(seg);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(decapsulate(seg, r.packet), seg);
    EXPECT_EQ(bytes_of(seg), ex::host_frame());
    EXPECT_EQ(seg->packet_type, RTE_PTYPE_UNKNOWN);
    rte_pktmbuf_free(seg);

    rte_mbuf* split = mbuf_of(ex::data_packet(), {50});
    r = parse(split);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(decapsulate(split, r.packet), nullptr);
    EXPECT_EQ(bytes_of(split), ex::data_packet()) << "unchanged on failure";
    rte_pktmbuf_free(split);

    rte_mbuf* ack = mbuf_of(ex::ack_packet());
    r = parse(ack);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(decapsulate(ack, r.packet), nullptr) << "only DATA has a host frame";
    rte_pktmbuf_free(ack);
}

TEST_F(wire_mbuf, control_packet_builders)
{
    const parse_result data = parse(ex::data_packet());
    ASSERT_TRUE(data.ok());
    const auto data_now = static_cast<common::time_ns>(ex::data_time) + ex::data_latency;
    rte_mbuf* ack = build_ack(_pool, ex::receiver_config(), data.packet, data_now);
    ASSERT_NE(ack, nullptr);
    EXPECT_EQ(bytes_of(ack), ex::ack_packet());
    EXPECT_EQ(ack->nb_segs, 1);
    rte_pktmbuf_free(ack);

    rte_mbuf* probe = build_probe(_pool, ex::sender_config(), ex::receiver_ip, 0x0042,
                                  ex::probe_spec().header);
    ASSERT_NE(probe, nullptr);
    EXPECT_EQ(bytes_of(probe), ex::probe_packet());

    const parse_result pr = parse(probe);
    ASSERT_TRUE(pr.ok());
    const auto probe_now = static_cast<common::time_ns>(ex::probe_time) + ex::probe_latency;
    rte_mbuf* pa = build_probe_ack(_pool, ex::receiver_config(), pr.packet, probe_now);
    ASSERT_NE(pa, nullptr);
    EXPECT_EQ(bytes_of(pa), ex::probe_ack_packet());
    rte_pktmbuf_free(pa);

    // Wrong inputs: nothing allocated.
    EXPECT_EQ(build_ack(_pool, ex::receiver_config(), pr.packet, 0), nullptr);
    EXPECT_EQ(build_probe_ack(_pool, ex::receiver_config(), data.packet, 0), nullptr);
    EXPECT_EQ(build_probe(_pool, ex::sender_config(), 1, 2, data.packet.header), nullptr);
    rte_pktmbuf_free(probe);
}

TEST_F(wire_mbuf, builders_with_an_empty_pool)
{
    std::vector<rte_mbuf*> taken(pool_size);
    ASSERT_EQ(rte_pktmbuf_alloc_bulk(_pool, taken.data(), pool_size), 0);
    const parse_result data = parse(ex::data_packet());
    EXPECT_EQ(build_ack(_pool, ex::receiver_config(), data.packet, 0), nullptr);
    EXPECT_EQ(build_probe(_pool, ex::sender_config(), 1, 2, ex::probe_spec().header), nullptr);
    for (rte_mbuf* m : taken) {
        rte_pktmbuf_free(m);
    }
}

TEST_F(wire_mbuf, rte_hash_computes_flow_hash)
{
    rte_hash_parameters params{};
    params.name = "wire_flow_hash";
    params.entries = 64;
    params.key_len = sizeof(flow_key);
    params.hash_func = rte_hash_crc;
    params.hash_func_init_val = 7;
    params.socket_id = SOCKET_ID_ANY;
    rte_hash* h = rte_hash_create(&params);
    ASSERT_NE(h, nullptr);
    const flow_key key = classify(std::span<const std::uint8_t>(ex::host_frame())).key;
    EXPECT_EQ(rte_hash_hash(h, &key), flow_hash(key, 7));
    ASSERT_GE(rte_hash_add_key_with_hash(h, &key, flow_hash(key, 7)), 0);
    EXPECT_GE(rte_hash_lookup(h, &key), 0);
    rte_hash_free(h);
}

// The engine hashes its keys itself and looks them up with the hash
// (wire/key_hash.hpp): the value must be rte_hash_crc's, the tables' own
// hash function, for every key, or a flow added by key would not be found
// by hash. Keys of 16 bytes (the receiver's) and 48 (the sender's), random
// bytes, seed 0 (the tables') and random seeds.
TEST_F(wire_mbuf, key_hash_is_rte_hash_crc)
{
    struct alignas(8) key16 {
        std::array<std::uint8_t, 16> b;
    };
    struct alignas(8) key48 {
        std::array<std::uint8_t, 48> b;
    };
    laps::common::rng random(0x9E3779B97F4A7C15ULL);
    for (int round = 0; round < 1000; ++round) {
        key16 a{};
        key48 b{};
        for (auto& x : a.b) {
            x = static_cast<std::uint8_t>(random());
        }
        for (auto& x : b.b) {
            x = static_cast<std::uint8_t>(random());
        }
        const std::uint32_t seed = round == 0 ? 0 : random.next32();
        ASSERT_EQ(key_hash(a, seed), rte_hash_crc(&a, sizeof a, seed)) << "round " << round;
        ASSERT_EQ(key_hash(b, seed), rte_hash_crc(&b, sizeof b, seed)) << "round " << round;
    }
}

} // namespace

// docs/app.md "Timestamps": the shell restamps DATA and PROBE as
// they leave; everything else keeps its bytes.
TEST_F(wire_mbuf, stamp_departure_rewrites_only_the_time_of_data_and_probes)
{
    constexpr common::time_ns leaves = 0x0000'2222'3333'4444;
    const std::uint16_t port = wire::default_udp_port;
    for (const bytes& sent : {ex::data_packet(), ex::probe_packet()}) {
        rte_mbuf* m = mbuf_of(sent);
        EXPECT_TRUE(wire::stamp_departure(m, port, leaves));
        bytes want = sent;
        store_be48(&want[outer_off::laps + laps_off::time], static_cast<std::uint64_t>(leaves));
        EXPECT_EQ(bytes_of(m), want) << "only the 6 bytes of time change";
        rte_pktmbuf_free(m);
    }
    // Answers carry a latency, pass-through frames are not ours, another
    // port is another protocol, a header cut short is not touched.
    bytes short_data = ex::data_packet();
    short_data.resize(outer_off::laps + laps_off::time + 5);
    for (const auto& [name, frame, on_port] :
         {std::tuple{"ack", ex::ack_packet(), port}, std::tuple{"probe_ack", ex::probe_ack_packet(), port},
          std::tuple{"host frame", ex::host_frame(), port}, std::tuple{"other port", ex::data_packet(), std::uint16_t(4791)},
          std::tuple{"short", short_data, port}}) {
        rte_mbuf* m = mbuf_of(frame);
        EXPECT_FALSE(wire::stamp_departure(m, on_port, leaves)) << name;
        EXPECT_EQ(bytes_of(m), frame) << name;
        rte_pktmbuf_free(m);
    }
}

} // namespace laps::wire
