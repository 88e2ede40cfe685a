// Coalesced ACKs (wire/ack_run.hpp, docs/wire-format.md "ACK_RUN"): the run
// block carries, per answered DATA, what its own ACK would (sequence,
// latency, time_echo, acked_bytes, ECN echo), so the sender's Alg. 1-3 see
// the same samples (paper §III-E..G); the parser bounds the block before
// anything reads it, and the authentication tag covers it.
#include "tests/unit/wire/examples.hpp"
#include "wire/ack_run.hpp"
#include "wire/auth.hpp"
#include "wire/bytes.hpp"
#include "wire/header_writer.hpp"
#include "wire/parse.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace laps::wire {
namespace {

namespace ex = test::wire_examples;
using test::bytes;

constexpr std::size_t laps_at = outer_size;

parsed_packet parsed(const bytes& b)
{
    const parse_result r = parse(b);
    EXPECT_TRUE(r.ok()) << to_string(r.error);
    return r.packet;
}

// Each answer of the example ACK_RUN is what that DATA's own ACK says.
TEST(wire_ack_run, every_answer_equals_the_ack_of_its_data)
{
    const bytes run = ex::ack_run_packet();
    const parsed_packet p = parsed(run);
    ASSERT_EQ(p.header.type, packet_type::ack_run);
    ASSERT_EQ(p.header.run_entries, 2);
    EXPECT_EQ(p.header.size(), laps_size(2) + run_block_size(2));
    EXPECT_EQ(p.inner_offset, run.size());

    const auto now = static_cast<common::time_ns>(ex::data_time) + 500;
    const std::vector<bytes> data{ex::data_packet(), ex::data_packet_at(43, ex::data_time + 800, false),
                                  ex::data_packet_at(44, ex::data_time + 1600, true)};
    std::vector<answer_fields> answers{answer_of(p.header)};
    const std::uint8_t* block = run.data() + laps_at + laps_size(p.header.anchor_count);
    for (std::size_t i = 0; i < p.header.run_entries; ++i) {
        answers.push_back(read_run_entry(block, i, answers.front().latency_ns));
    }
    for (std::size_t i = 0; i < data.size(); ++i) {
        const parsed_packet d = parsed(data[i]);
        const laps_header ack = ack_header_for(d.header, d.ce_marked(), now, d.frame_length);
        EXPECT_EQ(answers[i].seq, ack.seq) << i;
        EXPECT_EQ(answers[i].latency_ns, ack.latency_ns()) << i;
        EXPECT_EQ(answers[i].time_echo, ack.time_echo) << i;
        EXPECT_EQ(answers[i].acked_bytes, ack.acked_bytes) << i;
        EXPECT_EQ(answers[i].ecn_echo, ack.has_flag(flag_ecn_echo)) << i;
    }
    EXPECT_EQ(answers[1].latency_ns, -300);
    EXPECT_EQ(answers[2].latency_ns, -1100);
    EXPECT_TRUE(answers[2].ecn_echo);
}

// Apart from its type, lengths and run block, an ACK_RUN is its first DATA's ACK.
TEST(wire_ack_run, the_fixed_header_is_the_first_datas_ack)
{
    const parsed_packet first = parsed(ex::data_packet());
    const auto now = static_cast<common::time_ns>(ex::data_time) + 500;
    const header_writer writer(ex::receiver_config());
    bytes ack(writer.answer_size(first.header.anchor_count));
    writer.answer(ack.data(), first, now);
    const bytes run = ex::ack_run_packet();
    const parsed_packet a = parsed(ack);
    parsed_packet r = parsed(run);
    r.header.type = packet_type::ack;
    r.header.run_entries = 0;
    EXPECT_EQ(r.header, a.header);
    EXPECT_EQ(r.src_port, a.src_port);
    EXPECT_EQ(r.dst_ip, a.dst_ip);
    EXPECT_EQ(r.tos, a.tos);
}

TEST(wire_ack_run, a_run_count_of_zero_or_over_31_is_malformed)
{
    const bytes run = ex::ack_run_packet();
    const std::size_t count_at = laps_at + laps_size(2) + run_off::count;
    for (int n : {0, 32, 33, 255}) {
        bytes p = run;
        p[count_at] = static_cast<std::uint8_t>(n);
        EXPECT_EQ(parse(p).error, parse_error::bad_run_count) << n;
    }
    // A count larger than the block that is there: cut short.
    bytes p = run;
    p[count_at] = 3;
    EXPECT_EQ(parse(p).error, parse_error::truncated_laps);
    // Fewer than the block holds: the rest is padding, as after any control packet.
    p[count_at] = 1;
    const parse_result one = parse(p);
    ASSERT_TRUE(one.ok());
    EXPECT_EQ(one.packet.header.run_entries, 1);
}

TEST(wire_ack_run, an_entry_holds_latencies_within_a_32_bit_delta)
{
    const parsed_packet first = parsed(ex::data_packet());
    const auto now = static_cast<common::time_ns>(ex::data_time) + 500;
    const std::int64_t base = run_base_latency(first, now);
    run_entry e;
    // Stamped 2^31 - 1 ns before the first: fits; 2^31 ns: does not.
    const std::uint64_t t = ex::data_time;
    EXPECT_TRUE(run_entry_for(parsed(ex::data_packet_at(43, t - 0x7FFFFFFF, false)), now, base, e));
    EXPECT_EQ(e.latency_delta, 0x7FFFFFFF);
    EXPECT_FALSE(run_entry_for(parsed(ex::data_packet_at(43, t - 0x80000000ULL, false)), now, base, e));
    EXPECT_TRUE(run_entry_for(parsed(ex::data_packet_at(43, t + 0x80000000ULL, false)), now, base, e));
    EXPECT_EQ(e.latency_delta, std::numeric_limits<std::int32_t>::min());
}

// The longest ACK_RUN: 4 anchors, 31 entries, the trailer: parses from
// parse_window bytes, and the tag covers the run block.
TEST(wire_ack_run, the_longest_signed_run_parses_and_its_tag_covers_the_block)
{
    packet_spec spec = ex::data_spec();
    const std::array<std::uint32_t, max_anchors> anchors{1, 2, 3, 4};
    ASSERT_TRUE(spec.header.set_anchors(anchors));
    const parsed_packet first = parsed(ex::encode(ex::sender_config(), spec, ex::host_frame()));
    const auto now = static_cast<common::time_ns>(ex::data_time) + 500;
    std::array<run_entry, max_run_entries> entries;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        spec.header.seq = static_cast<std::uint32_t>(43 + i);
        spec.header.time = ex::data_time + 100 * i;
        ASSERT_TRUE(run_entry_for(parsed(ex::encode(ex::sender_config(), spec, ex::host_frame())), now,
                                  run_base_latency(first, now), entries[i]));
    }
    const header_writer writer(ex::receiver_config(), true);
    bytes run(writer.answer_run_size(max_anchors, entries.size()));
    ASSERT_EQ(run.size(), outer_size + laps_max_run_size + auth_size);
    writer.answer_run(run.data(), first, now, entries, 0x7FFFFFFF);
    authenticator signer(ex::example_key(), 1);
    signer.sign(run.data(), laps_max_run_size);

    const parse_result r = parse_head({run.data(), std::min(run.size(), parse_window)}, run.size());
    ASSERT_TRUE(r.ok()) << to_string(r.error);
    EXPECT_EQ(r.packet.header.run_entries, max_run_entries);
    EXPECT_EQ(r.packet.trailer_offset(), laps_at + laps_max_run_size);
    authenticator verifier(ex::example_key(), 2);
    EXPECT_TRUE(verifier.verify(run.data(), r.packet));
    const std::uint8_t* block = run.data() + laps_at + laps_size(max_anchors);
    EXPECT_EQ(read_run_entry(block, 30, 0).seq, 73u);
    EXPECT_TRUE(read_run_entry(block, 30, 0).ecn_echo);

    // One bit of the last entry changed: the tag no longer verifies.
    bytes forged = run;
    forged[laps_at + laps_size(max_anchors) + run_off::entries + 30 * run_entry_size] ^= 1;
    EXPECT_FALSE(verifier.verify(forged.data(), parse(forged).packet));
}

// The engine builds an ACK_RUN in place (pipeline/ack_coalescing.cpp): the
// first DATA's ACK, entries written behind the anchors, then finish_run().
// Those bytes must be the reference writer's (answer_run, the doc's example),
// for any anchors, entry count, ECN bits and traffic class, signed or not.
TEST(wire_ack_run, the_in_place_build_equals_the_reference_writer)
{
    std::mt19937_64 rng(20261129);
    for (int round = 0; round < 2000; ++round) {
        outer_config cfg = ex::receiver_config();
        cfg.ack = {static_cast<std::uint8_t>(rng() & 0x3F), static_cast<std::uint8_t>(rng() & 3)};
        const bool signed_run = (rng() & 1) != 0;
        const header_writer writer(cfg, signed_run);
        packet_spec spec = ex::data_spec();
        std::vector<std::uint32_t> anchors(rng() % (max_anchors + 1));
        for (auto& a : anchors) {
            a = static_cast<std::uint32_t>(rng());
        }
        ASSERT_TRUE(spec.header.set_anchors(anchors));
        spec.entropy = static_cast<std::uint16_t>(rng());
        const parsed_packet first = parsed(ex::encode(ex::sender_config(), spec, ex::host_frame()));
        const auto now = static_cast<common::time_ns>(ex::data_time + rng() % 100000);
        std::vector<run_entry> entries(1 + rng() % max_run_entries);
        for (auto& e : entries) {
            e = {static_cast<std::uint32_t>(rng()), static_cast<std::int32_t>(rng()), static_cast<std::uint16_t>(rng()),
                 static_cast<std::uint16_t>(rng())};
        }
        const auto ecn = static_cast<std::uint32_t>(rng());

        bytes reference(writer.answer_run_size(anchors.size(), entries.size()));
        ASSERT_EQ(writer.answer_run(reference.data(), first, now, entries, ecn), reference.size());

        bytes in_place(reference.size(), 0xEE); // what the mbuf held before
        writer.answer(in_place.data(), first, now);
        std::uint8_t* block = in_place.data() + outer_size + laps_size(anchors.size());
        for (std::size_t i = 0; i < entries.size(); ++i) {
            write_run_entry(block, i, entries[i]);
        }
        ASSERT_EQ(writer.finish_run(in_place.data(), first.src_ip, first.entropy(), anchors.size(), entries.size(), ecn),
                  reference.size());
        // The trailer is the signer's to write: compare what comes before it.
        const std::size_t headers = reference.size() - (signed_run ? auth_size : 0);
        ASSERT_TRUE(std::equal(reference.begin(), reference.begin() + static_cast<std::ptrdiff_t>(headers),
                               in_place.begin()))
            << "round " << round;
    }
}

} // namespace
} // namespace laps::wire
