#pragma once
// Big-endian loads and stores on raw bytes. memcpy-free and alignment-free: a
// header in an mbuf can start at any byte, and the pure layer must not depend
// on EAL or on the host's byte order.

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace laps::wire {

inline std::uint16_t load_be16(const std::uint8_t* p) noexcept
{
    return static_cast<std::uint16_t>((std::uint16_t{p[0]} << 8) | p[1]);
}

inline std::uint32_t load_be32(const std::uint8_t* p) noexcept
{
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

// 48-bit field into the low bits of a 64-bit value.
inline std::uint64_t load_be48(const std::uint8_t* p) noexcept
{
    return (std::uint64_t{load_be16(p)} << 32) | load_be32(p + 2);
}

inline void store_be16(std::uint8_t* p, std::uint16_t v) noexcept
{
    p[0] = static_cast<std::uint8_t>(v >> 8);
    p[1] = static_cast<std::uint8_t>(v);
}

inline void store_be32(std::uint8_t* p, std::uint32_t v) noexcept
{
    p[0] = static_cast<std::uint8_t>(v >> 24);
    p[1] = static_cast<std::uint8_t>(v >> 16);
    p[2] = static_cast<std::uint8_t>(v >> 8);
    p[3] = static_cast<std::uint8_t>(v);
}

// Low 48 bits of `v`; the high 16 bits are dropped.
inline void store_be48(std::uint8_t* p, std::uint64_t v) noexcept
{
    store_be16(p, static_cast<std::uint16_t>(v >> 32));
    store_be32(p + 2, static_cast<std::uint32_t>(v));
}

// Masked word compares for the parsers' fast paths: eight frame bytes as
// one word in host order, compared with masks and expected values built from
// byte lists the same way, so a compare means the same on any byte order.
inline std::uint64_t load_word(const std::uint8_t* p) noexcept
{
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

constexpr std::uint64_t word_of(std::array<std::uint8_t, 8> bytes) noexcept
{
    return std::bit_cast<std::uint64_t>(bytes);
}

// Frame bytes 12-19 of an untagged IPv4 frame whose header has no options:
// ethertype 0x0800, version 4 with IHL 5 (tos, total length and id free).
inline constexpr std::size_t plain_ipv4_at = 12;
inline constexpr std::uint64_t plain_ipv4_mask = word_of({0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0});
inline constexpr std::uint64_t plain_ipv4_want = word_of({0x08, 0x00, 0x45, 0, 0, 0, 0, 0});

inline bool is_plain_ipv4(const std::uint8_t* frame) noexcept
{
    return (load_word(frame + plain_ipv4_at) & plain_ipv4_mask) == plain_ipv4_want;
}

} // namespace laps::wire
