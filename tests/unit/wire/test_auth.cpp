// Authenticated packets (wire/auth.hpp, wire/replay_window.hpp,
// docs/security.md): SipHash-2-4 as published, a tag over everything an
// engine reads but the anchor index switches advance, the key's text form,
// and the anti-replay window.
#include "tests/unit/wire/examples.hpp"
#include "wire/auth.hpp"
#include "wire/replay_window.hpp"

#include <gtest/gtest.h>

using namespace laps;
namespace ex = laps::test::wire_examples;

// The SipHash paper's vector (Aumasson and Bernstein, appendix A): key
// 00..0f, message 00..0e, SipHash-2-4 = a129ca6149be45e5 (as a little-endian
// 64-bit word). Checks the library's SipHash-2-4 and the 64-bit output.
TEST(Auth, SipHash24MatchesThePublishedVector)
{
    wire::authenticator a(ex::example_key(), 0);
    std::array<std::uint8_t, 15> message;
    for (std::size_t i = 0; i < message.size(); ++i) {
        message[i] = static_cast<std::uint8_t>(i);
    }
    const std::uint64_t tag = a.tag_of(message.data(), message.size());
    std::array<std::uint8_t, 8> bytes;
    std::memcpy(bytes.data(), &tag, 8);
    EXPECT_EQ(bytes, (std::array<std::uint8_t, 8>{0xe5, 0x45, 0xbe, 0x49, 0x61, 0xca, 0x29, 0xa1}));
    // Again: the context starts afresh for every tag.
    EXPECT_EQ(a.tag_of(message.data(), message.size()), tag);
}

TEST(Auth, ASignedPacketParsesAndVerifies)
{
    const test::bytes packet = ex::data_authenticated_packet();
    const wire::parse_result r = wire::parse(packet);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r.packet.authenticated());
    EXPECT_EQ(r.packet.inner_offset, wire::outer_size + r.packet.header.size() + wire::auth_size);
    const test::bytes frame = ex::host_frame();
    const auto inner = r.packet.inner(packet);
    EXPECT_EQ(test::bytes(inner.begin(), inner.end()), frame) << "the host frame follows the trailer";
    const std::uint8_t* trailer = packet.data() + r.packet.trailer_offset();
    EXPECT_EQ(wire::load_be32(trailer + wire::auth_off::origin), ex::sender_epoch);
    EXPECT_EQ(wire::load_be32(trailer + wire::auth_off::counter + 4), 1u) << "the first counter value";
    wire::authenticator receiver(ex::example_key(), 99);
    EXPECT_TRUE(receiver.verify(packet.data(), r.packet));
}

// Every covered byte (the outer addresses, the LAPS header, origin, counter,
// tag) changed by one bit fails; the anchor index and the outer bytes a
// fabric may rewrite (MACs, TTL, ECN, checksum, source port) do not matter.
TEST(Auth, EveryCoveredBitCountsAndNothingElseDoes)
{
    const test::bytes packet = ex::data_authenticated_packet();
    const wire::parse_result good = wire::parse(packet);
    ASSERT_TRUE(good.ok());
    wire::authenticator receiver(ex::example_key(), 99);
    const std::size_t laps = good.packet.laps_offset;
    const std::size_t end = good.packet.trailer_offset() + wire::auth_size;
    for (std::size_t at = 0; at < end; ++at) {
        for (int bit = 0; bit < 8; ++bit) {
            test::bytes p = packet;
            p[at] ^= static_cast<std::uint8_t>(1u << bit);
            const wire::parse_result r = wire::parse(p);
            if (!r.ok()) {
                continue; // the parser refuses it before any tag is looked at
            }
            const bool covered = (at >= wire::outer_off::ip_src && at < wire::outer_off::ip_dst + 4) ||
                                 (at >= laps && at < end && at != laps + wire::laps_off::anchor_index);
            EXPECT_EQ(receiver.verify(p.data(), r.packet), !covered) << "byte " << at << " bit " << bit;
        }
    }
}

TEST(Auth, AnotherKeyOrNoTrailerFails)
{
    const test::bytes packet = ex::data_authenticated_packet();
    const wire::parse_result r = wire::parse(packet);
    ASSERT_TRUE(r.ok());
    wire::auth_key other = ex::example_key();
    other.bytes[15] ^= 1;
    wire::authenticator wrong(other, 1);
    EXPECT_FALSE(wrong.verify(packet.data(), r.packet));
    const test::bytes plain = ex::data_packet();
    const wire::parse_result q = wire::parse(plain);
    ASSERT_TRUE(q.ok());
    EXPECT_FALSE(q.packet.authenticated());
    wire::authenticator right(ex::example_key(), 1);
    EXPECT_FALSE(right.verify(plain.data(), q.packet));
}

TEST(Auth, CountersGoUpByOnePerSignedPacket)
{
    wire::authenticator signer(ex::example_key(), ex::sender_epoch);
    wire::packet_spec spec = ex::data_spec();
    spec.header.flags |= wire::flag_authenticated;
    std::vector<std::uint64_t> tags;
    for (std::uint32_t i = 1; i <= 3; ++i) {
        test::bytes p = ex::encode(ex::sender_config(), spec, ex::host_frame());
        signer.sign(p.data(), spec.header.size());
        const std::size_t trailer = wire::outer_size + spec.header.size();
        EXPECT_EQ(wire::load_be32(p.data() + trailer + wire::auth_off::counter + 4), i);
        std::uint64_t t;
        std::memcpy(&t, p.data() + trailer + wire::auth_off::tag, 8);
        tags.push_back(t);
    }
    EXPECT_NE(tags[0], tags[1]) << "the same header signed twice carries different tags";
    EXPECT_EQ(signer.signed_count(), 3u);
}

TEST(Auth, KeyTextIs32HexDigitsAndErrorsNeverEchoIt)
{
    EXPECT_EQ(wire::parse_auth_key("000102030405060708090a0B0c0d0e0f\n"), ex::example_key());
    try {
        wire::parse_auth_key("00010203040506070809");
        FAIL();
    } catch (const wire::auth_error& e) {
        EXPECT_NE(std::string(e.what()).find("32 hexadecimal digits"), std::string::npos);
    }
    try {
        wire::parse_auth_key("zz0102030405060708090a0b0c0d0e0f");
        FAIL();
    } catch (const wire::auth_error& e) {
        EXPECT_NE(std::string(e.what()).find("character 1"), std::string::npos);
        EXPECT_EQ(std::string(e.what()).find("zz01"), std::string::npos) << "no key text in errors";
    }
}

// RFC 4303 §3.4.3's window: each counter once, out of order within the
// window, nothing at or beyond `bits` behind the highest.
TEST(ReplayWindow, EachCounterOnceWithinTheWindow)
{
    wire::replay_window w;
    EXPECT_FALSE(w.accept(0));
    EXPECT_TRUE(w.accept(5));
    EXPECT_FALSE(w.accept(5));
    EXPECT_TRUE(w.accept(3)); // late but in the window
    EXPECT_FALSE(w.accept(3));
    EXPECT_TRUE(w.accept(4));
    EXPECT_TRUE(w.accept(5 + wire::replay_window::bits - 1));
    EXPECT_FALSE(w.accept(5)) << "seen";
    EXPECT_TRUE(w.accept(6)) << "never seen, still inside";
    EXPECT_FALSE(w.accept(4)) << "now too old";
    // A jump past the whole window forgets everything below it.
    const std::uint64_t far = 100 * wire::replay_window::bits;
    EXPECT_TRUE(w.accept(far));
    EXPECT_FALSE(w.accept(far - wire::replay_window::bits));
    EXPECT_TRUE(w.accept(far - wire::replay_window::bits + 1));
    // Counters skipped by a jump are not marked seen (word-wide clearing).
    for (std::uint64_t c = far + 1; c < far + 200; c += 2) {
        EXPECT_TRUE(w.accept(c + 1));
    }
    for (std::uint64_t c = far + 1; c < far + 200; c += 2) {
        EXPECT_TRUE(w.accept(c)) << c;
        EXPECT_FALSE(w.accept(c)) << c;
    }
}
