#pragma once
// Big-endian loads and stores on raw bytes. memcpy-free and alignment-free: a
// header in an mbuf can start at any byte, and the pure layer must not depend
// on EAL or on the host's byte order.

#include <cstdint>

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

} // namespace laps::wire
