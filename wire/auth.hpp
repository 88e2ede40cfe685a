#pragma once
// Authenticated LAPS packets (docs/security.md, docs/wire-format.md
// "Authentication"): with a per-fabric key, every packet an engine sends
// carries a trailer after its anchors,
//
//   origin  4   the signing engine's epoch (its incarnation)
//   counter 8   that engine's packet counter: 1, 2, 3, ... for every packet it signs
//   tag     8   SipHash-2-4 (libsodium's crypto_shorthash_siphash24) under the key of
//               outer IPv4 source and destination | the LAPS header with anchor_index 0 | origin | counter
//
// and a receiver with the key drops every LAPS packet whose tag does not
// verify (fabric_drop_unauthenticated) or whose (source, origin, counter)
// it has seen or is too old for its window (fabric_drop_replayed,
// replay_window.hpp). anchor_index is left out because switches advance it
// on the way; everything else a LAPS engine reads is covered, the addresses
// included, so a packet cannot be replayed from another host or to another.
// The host frame of a DATA is not (the host's transport protects its own
// payload; the cost stays per packet, not per byte).
//
// SipHash is a PRF, designed as a MAC for short inputs (Aumasson and
// Bernstein); 64-bit tags mean a forger succeeds with probability 2^-64 per
// packet tried. libsodium's is one call per tag (about 280 instructions for
// a header; OpenSSL's EVP_MAC of the same SipHash took 1,050: PERFORMANCE.md §10).

#include "wire/layout.hpp"
#include "wire/parse.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace laps::wire {

// A 128-bit key. Never logged: to_string is not offered.
struct auth_key {
    std::array<std::uint8_t, 16> bytes{};
    bool operator==(const auth_key&) const = default;
};

class auth_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// 32 hexadecimal digits (whitespace around them ignored): the config's and
// the key file's form. Throws auth_error saying what is wrong, never echoing
// the text.
auth_key parse_auth_key(std::string_view text);

// Signs and verifies with one key for one engine (not thread-safe: each
// worker's engine has its own). Everything is allocated in the constructor.
class authenticator {
public:
    // `origin`: the trailer's origin field, the engine's epoch. Throws
    // auth_error when libsodium cannot start.
    authenticator(const auth_key& key, std::uint32_t origin);
    ~authenticator();
    authenticator(const authenticator&) = delete;
    authenticator& operator=(const authenticator&) = delete;

    // Fills the trailer of the packet at `packet`: its outer IPv4 header at
    // outer_off::ip (as LAPS sends it: no VLAN, no options), its LAPS header
    // of `laps_bytes` (laps_size of its anchors) at outer_off::laps, and
    // auth_size bytes of room after it. Uses the next counter value.
    void sign(std::uint8_t* packet, std::size_t laps_bytes) noexcept;

    // Whether the trailer of parsed packet `p` verifies; `packet` holds the
    // frame's first p.trailer_offset() + auth_size bytes.
    bool verify(const std::uint8_t* packet, const parsed_packet& p) noexcept;

    std::uint32_t origin() const noexcept { return _origin; }
    std::uint64_t signed_count() const noexcept { return _counter; }

    // The tag over arbitrary bytes (the tests' reference vectors).
    std::uint64_t tag_of(const std::uint8_t* data, std::size_t length) noexcept;

private:
    // The tag of: addresses | LAPS header (anchor_index 0) | origin | counter.
    std::uint64_t tag(std::uint32_t src_ip, std::uint32_t dst_ip, const std::uint8_t* laps, std::size_t laps_bytes,
                      const std::uint8_t* origin_counter) noexcept;

    auth_key _key;
    std::uint32_t _origin;
    std::uint64_t _counter = 0;
};

} // namespace laps::wire
