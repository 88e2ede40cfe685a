#include "wire/auth.hpp"

#include "wire/bytes.hpp"

#include <sodium.h>

#include <cctype>
#include <cstring>

namespace laps::wire {

namespace {

int hex_value(char c) noexcept
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// Addresses 8 | LAPS header at most laps_max_run_size | origin and counter 12.
constexpr std::size_t max_input = 8 + laps_max_run_size + 12;

} // namespace

auth_key parse_auth_key(std::string_view text)
{
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
        text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.remove_suffix(1);
    }
    auth_key key;
    if (text.size() != 2 * key.bytes.size()) {
        throw auth_error("a key is 32 hexadecimal digits (128 bits), got " + std::to_string(text.size()) +
                         " characters");
    }
    for (std::size_t i = 0; i < key.bytes.size(); ++i) {
        const int hi = hex_value(text[2 * i]);
        const int lo = hex_value(text[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            throw auth_error("a key is 32 hexadecimal digits (128 bits): character " +
                             std::to_string(2 * i + (hi < 0 ? 1 : 2)) + " is not one");
        }
        key.bytes[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    return key;
}

authenticator::authenticator(const auth_key& key, std::uint32_t origin) : _key(key), _origin(origin)
{
    // sodium_init() is idempotent and thread-safe; it picks the CPU's code
    // paths and seeds its generator (unused here).
    if (sodium_init() < 0) {
        throw auth_error("libsodium could not start (sodium_init failed)");
    }
    static_assert(crypto_shorthash_siphash24_BYTES == auth_tag_size, "64-bit SipHash-2-4 tags");
    static_assert(crypto_shorthash_siphash24_KEYBYTES == sizeof(auth_key::bytes), "a 128-bit key");
}

authenticator::~authenticator()
{
    sodium_memzero(_key.bytes.data(), _key.bytes.size());
}

std::uint64_t authenticator::tag_of(const std::uint8_t* data, std::size_t length) noexcept
{
    // SipHash-2-4 as published: one call, no state between packets.
    std::array<std::uint8_t, auth_tag_size> out{};
    crypto_shorthash_siphash24(out.data(), data, length, _key.bytes.data());
    std::uint64_t v = 0;
    std::memcpy(&v, out.data(), sizeof v);
    return v;
}

std::uint64_t authenticator::tag(std::uint32_t src_ip, std::uint32_t dst_ip, const std::uint8_t* laps,
                                 std::size_t laps_bytes, const std::uint8_t* origin_counter) noexcept
{
    std::array<std::uint8_t, max_input> input;
    store_be32(input.data(), src_ip);
    store_be32(input.data() + 4, dst_ip);
    std::memcpy(input.data() + 8, laps, laps_bytes);
    input[8 + laps_off::anchor_index] = 0; // switches advance it on the way
    std::memcpy(input.data() + 8 + laps_bytes, origin_counter, 12);
    return tag_of(input.data(), 8 + laps_bytes + 12);
}

void authenticator::sign(std::uint8_t* packet, std::size_t laps_bytes) noexcept
{
    std::uint8_t* laps = packet + outer_off::laps;
    std::uint8_t* trailer = laps + laps_bytes;
    store_be32(trailer + auth_off::origin, _origin);
    ++_counter;
    store_be32(trailer + auth_off::counter, static_cast<std::uint32_t>(_counter >> 32));
    store_be32(trailer + auth_off::counter + 4, static_cast<std::uint32_t>(_counter));
    const std::uint64_t t = tag(load_be32(packet + outer_off::ip_src), load_be32(packet + outer_off::ip_dst), laps,
                                laps_bytes, trailer);
    std::memcpy(trailer + auth_off::tag, &t, sizeof t);
}

bool authenticator::verify(const std::uint8_t* packet, const parsed_packet& p) noexcept
{
    if (!p.authenticated()) {
        return false;
    }
    const std::uint8_t* laps = packet + p.laps_offset;
    const std::uint8_t* trailer = packet + p.trailer_offset();
    const std::uint64_t want = tag(p.src_ip, p.dst_ip, laps, p.header.size(), trailer);
    // Constant time: the compare tells a forger nothing about how close it came.
    return sodium_memcmp(&want, trailer + auth_off::tag, sizeof want) == 0;
}

} // namespace laps::wire
