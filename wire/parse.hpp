#pragma once
// The one parser of LAPS packets. Every length and count is checked before it
// is used; a packet that fails is dropped by the caller and counted under
// to_string(error) ("parse_truncated_ipv4", ...), except the "not LAPS" reasons
// (is_foreign), which the caller passes through to the host.

#include "wire/laps_header.hpp"
#include "wire/outer.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace laps::wire {

enum class parse_error : std::uint8_t {
    ok,
    truncated_ethernet, // fewer than 14 bytes
    truncated_vlan,     // 802.1Q/802.1ad tag cut short
    not_ipv4,           // ethertype (after at most one tag) is not IPv4: foreign
    truncated_ipv4,     // header or IPv4 total length beyond the buffer
    bad_ipv4_header,    // version != 4, IHL < 5, total length < header length
    not_udp,            // IPv4 protocol is not UDP: foreign
    ipv4_fragment,      // MF or offset set; LAPS sends DF, so not ours: foreign
    truncated_udp,      // IPv4 payload shorter than a UDP header
    wrong_udp_port,     // UDP destination port is not the LAPS port: foreign
    bad_udp_length,     // UDP length < 8 or != IPv4 payload length
    truncated_laps,     // UDP payload shorter than the LAPS header it announces
    bad_version,        // LAPS version != 1
    bad_type,           // type not DATA/ACK/PROBE/PROBE_ACK/ACK_RUN
    too_many_anchors,   // anchor_count > 4
    bad_anchor_index,   // anchor_index > anchor_count
    bad_inner_length,   // DATA: inner_length != rest of UDP payload or < 14; others: != 0
    pid_out_of_range,   // ACK/PROBE_ACK/ACK_RUN/CREDIT pid >= the caller's PIT capacity
    bad_run_count,      // ACK_RUN: run block entry count 0 or > max_run_entries
    bad_ipv4_checksum,  // mbuf layer only: the NIC flagged the outer IPv4 checksum
    count_,
};

inline constexpr std::size_t parse_error_count = static_cast<std::size_t>(parse_error::count_);

// Counter name: "parse_ok", "parse_truncated_ipv4", ...
std::string_view to_string(parse_error e) noexcept;

// Not a LAPS packet at all (another protocol on the fabric port): pass it on.
constexpr bool is_foreign(parse_error e) noexcept
{
    return e == parse_error::not_ipv4 || e == parse_error::not_udp ||
           e == parse_error::ipv4_fragment || e == parse_error::wrong_udp_port;
}

// The headers ran past the bytes given: on a longer head the same packet may
// parse (mbuf_parse.cpp retries a chain with its head copied).
constexpr bool is_truncation(parse_error e) noexcept
{
    return e == parse_error::truncated_ethernet || e == parse_error::truncated_vlan ||
           e == parse_error::truncated_ipv4 || e == parse_error::truncated_udp || e == parse_error::truncated_laps;
}

struct parsed_packet {
    laps_header header;
    // No outer MACs: nothing reads them (an answer is addressed from the
    // configured next hop), and copying them cost every parse 16 instructions.
    // One 802.1Q/802.1ad tag is accepted on input (some fabrics tag); LAPS
    // itself never sends one (docs/wire-format.md §2).
    bool vlan = false;
    std::uint16_t vlan_tci = 0;
    // Outer IPv4 addresses, host order.
    std::uint32_t src_ip = 0;
    std::uint32_t dst_ip = 0;
    std::uint16_t src_port = 0;
    std::uint8_t tos = 0;
    std::uint8_t ttl = 0;
    // Offsets from the start of the frame.
    std::uint16_t laps_offset = 0;
    std::uint16_t inner_offset = 0; // DATA: the host frame, header.inner_length bytes (after any trailer)
    // L2 header + IPv4 total length: bytes past it (Ethernet padding) are not ours.
    std::uint32_t frame_length = 0;

    std::uint16_t entropy() const noexcept { return src_port & entropy_mask; }
    bool authenticated() const noexcept { return header.has_flag(flag_authenticated); }
    // The authentication trailer's offset (when authenticated()).
    std::size_t trailer_offset() const noexcept { return laps_offset + header.size(); }
    std::uint8_t dscp() const noexcept { return tos >> 2; }
    std::uint8_t ecn() const noexcept { return tos & 0x03; }
    bool ce_marked() const noexcept { return ecn() == ecn_ce; }

    // DATA: the host frame inside `packet` (the span that was parsed).
    std::span<const std::uint8_t> inner(std::span<const std::uint8_t> packet) const noexcept
    {
        return packet.subspan(inner_offset, header.inner_length);
    }
};

struct parse_result {
    parse_error error = parse_error::ok;
    parsed_packet packet; // meaningful only when ok()

    bool ok() const noexcept { return error == parse_error::ok; }
};

// The pid of an ACK/PROBE_ACK indexes our PIT; a DATA/PROBE pid is the
// sender's and is only echoed back, so it is never range-checked.
constexpr bool pid_in_range(const laps_header& h, std::size_t pit_capacity) noexcept
{
    return !(is_ack(h.type) || h.type == packet_type::credit) || h.pid < pit_capacity;
}

// Parses a whole frame. `pit_capacity` 0 skips the pid check; otherwise an
// ACK/PROBE_ACK/ACK_RUN/CREDIT with pid >= pit_capacity fails with pid_out_of_range.
parse_result parse(std::span<const std::uint8_t> packet, std::uint16_t udp_port = default_udp_port,
                   std::size_t pit_capacity = 0) noexcept;

// Most bytes parse() reads: VLAN-tagged Ethernet 18, IPv4 with options 60,
// UDP 8, LAPS 44 (424 with an ACK_RUN's run block) and its authentication
// trailer 20.
inline constexpr std::size_t parse_window = ether_size + vlan_size + 60 + udp_size + laps_max_run_size + auth_size;

// For frames that are not contiguous (multi-segment mbufs): `head` holds the
// first min(frame_length, parse_window) bytes of a frame of `frame_length`
// bytes. Lengths are checked against frame_length, reads stay inside `head`
// (a shorter `head` fails as truncated rather than reading past it).
parse_result parse_head(std::span<const std::uint8_t> head, std::size_t frame_length,
                        std::uint16_t udp_port = default_udp_port,
                        std::size_t pit_capacity = 0) noexcept;

// The same into the caller's `out` (the data path: no result copied, no
// zeroing). `out` is meaningful only when the result is parse_error::ok.
// The usual packet (untagged IPv4 without options, UDP to `udp_port`, LAPS
// version 2) is recognised by a few masked word compares and read field by
// field once; anything else takes parse_head_general, which names the error.
parse_error parse_head(std::span<const std::uint8_t> head, std::size_t frame_length, std::uint16_t udp_port,
                       std::size_t pit_capacity, parsed_packet& out) noexcept;

// Every case, one check at a time and without the fast path: the reference
// the fast path must agree with (tests/unit/wire compares the two on
// mutated packets).
parse_error parse_head_general(std::span<const std::uint8_t> head, std::size_t frame_length,
                               std::uint16_t udp_port, std::size_t pit_capacity, parsed_packet& out) noexcept;

} // namespace laps::wire
