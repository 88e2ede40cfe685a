#pragma once
// Byte-level encoders: a whole LAPS packet (or only its headers) into a
// caller's buffer. Pure: no mbufs, no EAL. The mbuf layer (mbuf_encap.hpp)
// calls encode_headers on prepended headroom.

#include "wire/laps_header.hpp"
#include "wire/outer.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace laps::wire {

// Where one LAPS packet goes and what its header says.
struct packet_spec {
    // Destination host's fabric IPv4, host order. For ACK/PROBE_ACK: the
    // outer source of the answered packet.
    std::uint32_t dst_ip = 0;
    // 14 bits chosen by the caller (from the path): UDP source port 0xC000 | entropy.
    std::uint16_t entropy = 0;
    laps_header header;
};

constexpr std::size_t headers_size(std::size_t anchor_count) noexcept
{
    return outer_size + laps_size(anchor_count);
}

// With the trailer its flags announce (written as zeros by the encoders;
// wire/auth.hpp signs it).
constexpr std::size_t headers_size(const laps_header& h) noexcept
{
    return headers_size(h.anchor_count) + trailer_size(h.flags);
}

// Writes outer Ethernet/IPv4/UDP and the LAPS header of a packet whose inner
// frame is `inner_length` bytes (header.inner_length is ignored and written as
// `inner_length`). Returns the bytes written, headers_size(header), or 0
// when the packet would not parse: `out` too small, unknown type,
// anchor_count > max_anchors, anchor_index > anchor_count, an inner frame on
// a non-DATA packet or a DATA frame shorter than an Ethernet header, or a
// total length over 65535.
std::size_t encode_headers(std::span<std::uint8_t> out, const outer_config& cfg,
                           const packet_spec& spec, std::size_t inner_length) noexcept;

// Whole packets: return the packet length, or 0 as above or when
// spec.header.type is not the function's type.
std::size_t encode_data(std::span<std::uint8_t> out, const outer_config& cfg,
                        const packet_spec& spec, std::span<const std::uint8_t> inner) noexcept;
std::size_t encode_ack(std::span<std::uint8_t> out, const outer_config& cfg,
                       const packet_spec& spec) noexcept;
std::size_t encode_probe(std::span<std::uint8_t> out, const outer_config& cfg,
                         const packet_spec& spec) noexcept;
std::size_t encode_probe_ack(std::span<std::uint8_t> out, const outer_config& cfg,
                             const packet_spec& spec) noexcept;

} // namespace laps::wire
