#pragma once
// Which worker owns a packet (docs/app.md "Lcores and steering",
// docs/wire-format.md "Steering tag").
//
//  - host frames: by flow. RSS on NICs; one RX queue per worker where the
//    host keeps each flow on one queue (net_pcap: one rx_pcap per worker);
//    else software: worker 0 hands each frame to worker
//    wire::flow_hash(classify(frame).key) % workers, the key the engine's flow
//    table uses, so a flow's frames reach one engine;
//  - fabric packets: by the steering tag in the low `tag_bits` bits of the
//    outer UDP source port, worker = tag % workers. The tag width is
//    fabric-wide (the same on every instance); each sending engine picks per
//    flow a tag t with t % its workers == its own index (pipeline/sender.cpp),
//    so ACKs and PROBE_ACKs, which echo the port, come back to the worker that
//    owns the flow, and a receiver with any number of workers (at most
//    2^tag_bits) takes all DATA of one flow on one worker. Packets that are
//    not LAPS stay with whoever read them.
//
// rte_flow rules (flow_rules.hpp), software dispatch (fabric_owner) and the
// emulated link (app/link/link.hpp) apply the same mapping: tag % workers.

#include "wire/layout.hpp"
#include "wire/mbuf_parse.hpp"

#include <rte_byteorder.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>

namespace laps::app {

// The fabric-wide tag width when the config does not set one: 16 workers on
// any host (steering.tag_bits; docs/app.md).
inline constexpr std::uint8_t default_tag_bits = 4;

// Bits of the tag for `workers` workers: ceil(log2(workers)).
constexpr std::uint8_t tag_bits_for(unsigned workers) noexcept
{
    std::uint8_t bits = 0;
    while ((1u << bits) < workers) {
        ++bits;
    }
    return bits;
}

constexpr std::uint16_t tag_mask(std::uint8_t bits) noexcept
{
    return static_cast<std::uint16_t>((1u << bits) - 1);
}

// The worker of a tag value.
constexpr std::uint16_t worker_of_tag(std::uint16_t tag, std::uint16_t workers) noexcept
{
    return static_cast<std::uint16_t>(tag % workers);
}

// The outer UDP source port of a LAPS packet (IPv4, UDP to `udp_port`, not a
// fragment, at most one VLAN tag), or -1 when the packet is not one.
inline std::int32_t laps_source_port(const rte_mbuf* m, std::uint16_t udp_port) noexcept
{
    constexpr std::uint32_t window = wire::ether_size + wire::vlan_size + 60 + 4;
    std::uint8_t copy[window];
    const std::uint32_t len = std::min<std::uint32_t>(window, m->pkt_len);
    const auto* p = static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, 0, len, copy));
    if (p == nullptr || len < wire::ether_size + wire::ipv4_size + 4) {
        return -1;
    }
    std::uint32_t l3 = wire::ether_size;
    std::uint16_t type = static_cast<std::uint16_t>((p[12] << 8) | p[13]);
    if (type == 0x8100 || type == 0x88a8) {
        type = static_cast<std::uint16_t>((p[16] << 8) | p[17]);
        l3 += wire::vlan_size;
    }
    if (type != 0x0800 || len < l3 + wire::ipv4_size) {
        return -1;
    }
    const std::uint32_t ihl = (p[l3] & 0x0f) * 4u;
    const bool fragment = ((p[l3 + 6] & 0x3f) | p[l3 + 7]) != 0;
    if ((p[l3] >> 4) != 4 || ihl < wire::ipv4_size || p[l3 + 9] != 17 || fragment || len < l3 + ihl + 4) {
        return -1;
    }
    const std::uint8_t* udp = p + l3 + ihl;
    if (static_cast<std::uint16_t>((udp[2] << 8) | udp[3]) != udp_port) {
        return -1;
    }
    return (udp[0] << 8) | udp[1];
}

// Software steering of a fabric packet; `self` keeps what is not LAPS.
inline std::uint16_t fabric_owner(const rte_mbuf* m, std::uint16_t udp_port, std::uint16_t mask,
                                  std::uint16_t workers, std::uint16_t self) noexcept
{
    const std::int32_t sport = laps_source_port(m, udp_port);
    if (sport < 0) {
        return self;
    }
    return worker_of_tag(static_cast<std::uint16_t>(sport) & mask, workers);
}

// Software steering of a host frame; frames that do not classify stay with `self`.
inline std::uint16_t host_owner(const rte_mbuf* m, std::uint16_t workers, std::uint16_t self) noexcept
{
    const wire::classification c = wire::classify(m);
    if (!c.ok()) {
        return self;
    }
    return static_cast<std::uint16_t>(wire::flow_hash(c.key) % workers);
}

} // namespace laps::app
