#pragma once
// A destination address as the PST keys it: 16 bytes, IPv4 stored IPv4-mapped
// (::ffff:a.b.c.d, RFC 4291 2.5.5.2) so one table serves both families.

#include <array>
#include <compare>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace laps::tables {

// 8-aligned: rte_hash_crc reads keys 8 bytes at a time.
struct alignas(8) address {
    std::array<std::uint8_t, 16> bytes{};

    // `host_order` is the IPv4 address as a number, 10.0.0.1 == 0x0a000001.
    static address ipv4(std::uint32_t host_order) noexcept
    {
        address a;
        a.bytes[10] = 0xff;
        a.bytes[11] = 0xff;
        a.bytes[12] = static_cast<std::uint8_t>(host_order >> 24);
        a.bytes[13] = static_cast<std::uint8_t>(host_order >> 16);
        a.bytes[14] = static_cast<std::uint8_t>(host_order >> 8);
        a.bytes[15] = static_cast<std::uint8_t>(host_order);
        return a;
    }

    // From 4 bytes in network order, as found in an IPv4 header.
    static address ipv4_wire(const std::uint8_t* network_order) noexcept
    {
        address a;
        a.bytes[10] = 0xff;
        a.bytes[11] = 0xff;
        std::memcpy(&a.bytes[12], network_order, 4);
        return a;
    }

    // From 16 bytes in network order, as found in an IPv6 header.
    static address ipv6_wire(const std::uint8_t* network_order) noexcept
    {
        address a;
        std::memcpy(a.bytes.data(), network_order, 16);
        return a;
    }

    bool is_ipv4() const noexcept
    {
        static constexpr std::uint8_t mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        return std::memcmp(bytes.data(), mapped_prefix, sizeof mapped_prefix) == 0;
    }

    // Link-local or link-scope multicast: 169.254.0.0/16, 224.0.0.0/24,
    // fe80::/10, ff02::/16. Such packets never leave the sender's link.
    bool is_link_scope() const noexcept
    {
        if (is_ipv4()) {
            const std::uint32_t a = ipv4_host_order();
            return (a >> 16) == 0xa9fe || (a >> 8) == 0xe00000;
        }
        return (bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80) || (bytes[0] == 0xff && (bytes[1] & 0x0f) == 0x02);
    }

    // The IPv4 address as a number; meaningful only when is_ipv4().
    std::uint32_t ipv4_host_order() const noexcept
    {
        return (std::uint32_t{bytes[12]} << 24) | (std::uint32_t{bytes[13]} << 16) |
               (std::uint32_t{bytes[14]} << 8) | std::uint32_t{bytes[15]};
    }

    // Accepts dotted IPv4 ("10.0.0.1") or any IPv6 text form ("fd00::1").
    static std::optional<address> parse(std::string_view text);
    std::string to_string() const;

    auto operator<=>(const address&) const = default;
};

} // namespace laps::tables
