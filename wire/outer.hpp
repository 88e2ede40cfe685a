#pragma once
// What the outer Ethernet/IPv4/UDP headers need that does not change from
// packet to packet: set once per fabric port from the config.

#include "wire/laps_header.hpp"
#include "wire/layout.hpp"

#include <array>
#include <cstdint>

namespace laps::wire {

using mac_address = std::array<std::uint8_t, 6>;

// ECN codepoints (RFC 3168), the low 2 bits of the IPv4 TOS byte.
inline constexpr std::uint8_t ecn_not_ect = 0;
inline constexpr std::uint8_t ecn_ect1 = 1;
inline constexpr std::uint8_t ecn_ect0 = 2;
inline constexpr std::uint8_t ecn_ce = 3;

inline constexpr std::uint8_t dscp_default = 0;
inline constexpr std::uint8_t dscp_expedited = 46; // EF: ACKs must not queue (paper §III-E)

struct traffic_class {
    std::uint8_t dscp = dscp_default; // 6 bits
    std::uint8_t ecn = ecn_not_ect;   // 2 bits

    constexpr std::uint8_t tos() const noexcept
    {
        return static_cast<std::uint8_t>(((dscp & 0x3F) << 2) | (ecn & 0x03));
    }
};

struct outer_config {
    mac_address own_mac{};
    mac_address next_hop_mac{};
    // Own fabric IPv4 address, host order (10.0.0.1 == 0x0a000001).
    std::uint32_t own_ip = 0;
    std::uint16_t udp_port = default_udp_port;
    std::uint8_t ttl = 64;
    // Fabric IP MTU; encapsulate() refuses larger packets (DF is always set,
    // so a switch would drop them). 0: not checked.
    std::uint16_t mtu = 0;
    // DATA is ECT(0) so a switch can CE-mark it (REPS); probes travel like data
    // so they see the same queues; answers are high priority and not ECN-capable.
    traffic_class data{dscp_default, ecn_ect0};
    traffic_class ack{dscp_expedited, ecn_not_ect};
    traffic_class probe{dscp_default, ecn_ect0};
    traffic_class probe_ack{dscp_expedited, ecn_not_ect};

    constexpr const traffic_class& class_of(packet_type t) const noexcept
    {
        switch (t) {
        case packet_type::ack:
        case packet_type::ack_run:
        case packet_type::credit:
            return ack;
        case packet_type::probe:
            return probe;
        case packet_type::probe_ack:
            return probe_ack;
        case packet_type::data:
            break;
        }
        return data;
    }
};

constexpr std::uint16_t udp_source_port(std::uint16_t entropy) noexcept
{
    return static_cast<std::uint16_t>(entropy_port_base | (entropy & entropy_mask));
}

} // namespace laps::wire
