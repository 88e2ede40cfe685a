#pragma once
// Sizes and offsets of the LAPS encapsulation, version 2 (docs/wire-format.md).
//
//   outer Ethernet 14 | outer IPv4 20 | outer UDP 8 | LAPS 28 + 4n | inner frame (DATA)
//
// `field_layout` is the single table of field positions: the encoder and parser
// use the named constants below, and tests/unit/wire checks both the code and
// the tables in docs/wire-format.md against it.

#include "tables/table_spec.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace laps::wire {

// 2: the sender's epoch (flow incarnations) and the answered packet's size
// in ACK/PROBE_ACK; version 1 (24-byte header, no epoch) is not accepted.
inline constexpr std::uint8_t laps_version = 2;

// Outer UDP destination port. Not 4789 (VXLAN), 6081 (Geneve), 4791 (RoCEv2)
// or 4793 (used by some RoCE/NVMe deployments).
inline constexpr std::uint16_t default_udp_port = 19521;
// Source ports are 0xC000 | 14-bit entropy: always in the dynamic range.
inline constexpr std::uint16_t entropy_port_base = 0xC000;
inline constexpr std::uint16_t entropy_mask = 0x3FFF;

inline constexpr std::size_t ether_size = 14;
inline constexpr std::size_t vlan_size = 4;
inline constexpr std::size_t ipv4_size = 20;
inline constexpr std::size_t udp_size = 8;
inline constexpr std::size_t outer_size = ether_size + ipv4_size + udp_size; // 42

inline constexpr std::size_t max_anchors = tables::max_anchors;
inline constexpr std::size_t anchor_size = 4;
inline constexpr std::size_t laps_fixed_size = 28;
inline constexpr std::size_t laps_max_size = laps_fixed_size + anchor_size * max_anchors; // 44
// Bytes a DATA packet adds to the host frame: the fabric MTU must exceed the
// host MTU by this much (42 + 28 + 16 = 86).
inline constexpr std::size_t max_overhead = outer_size + laps_max_size;

constexpr std::size_t laps_size(std::size_t anchor_count) noexcept
{
    return laps_fixed_size + anchor_size * anchor_count;
}

// The authentication trailer (docs/wire-format.md "Authentication"): right
// after the anchors of a packet whose flags have flag_authenticated (and
// before a DATA's host frame). Offsets from its first byte.
inline constexpr std::size_t auth_size = 20;
namespace auth_off {
inline constexpr std::size_t origin = 0;  // the signing engine's epoch
inline constexpr std::size_t counter = 4; // its packet counter, 64 bits
inline constexpr std::size_t tag = 12;    // SipHash-2-4, 64 bits
} // namespace auth_off
inline constexpr std::size_t auth_tag_size = 8;
// With a key (engine auth): 86 + 20 = 106.
inline constexpr std::size_t max_overhead_authenticated = max_overhead + auth_size;

// The run block of a coalesced ACK (ACK_RUN, docs/wire-format.md "Coalesced
// ACKs"): right after the anchors, before any authentication trailer. It
// answers the DATA packets of one (flow, path) that followed the one the
// fixed header answers, within one receive burst, in arrival order.
inline constexpr std::size_t run_header_size = 8;
inline constexpr std::size_t run_entry_size = 12;
// One bit per entry in the block's ECN bitmap (bit 31 unused).
inline constexpr std::size_t max_run_entries = 31;
namespace run_off {
inline constexpr std::size_t count = 0;      // entries that follow, 1..max_run_entries
inline constexpr std::size_t ecn_echo = 4;   // bit i: entry i's DATA arrived CE-marked
inline constexpr std::size_t entries = 8;
} // namespace run_off
namespace run_entry_off {
inline constexpr std::size_t seq = 0;
inline constexpr std::size_t latency_delta = 4; // signed ns, from the fixed header's latency
inline constexpr std::size_t time_echo = 8;
inline constexpr std::size_t acked_bytes = 10;
} // namespace run_entry_off

constexpr std::size_t run_block_size(std::size_t entries) noexcept
{
    return run_header_size + run_entry_size * entries;
}
// The largest LAPS header and its run block: 44 + 8 + 31 x 12 = 424.
inline constexpr std::size_t laps_max_run_size = laps_max_size + run_block_size(max_run_entries);

// Offsets inside the outer headers, from the start of the frame.
namespace outer_off {
inline constexpr std::size_t eth_dst = 0;
inline constexpr std::size_t eth_src = 6;
inline constexpr std::size_t eth_type = 12;
inline constexpr std::size_t ip = ether_size;
inline constexpr std::size_t ip_version_ihl = ip + 0;
inline constexpr std::size_t ip_tos = ip + 1;
inline constexpr std::size_t ip_total_length = ip + 2;
inline constexpr std::size_t ip_id = ip + 4;
inline constexpr std::size_t ip_flags_fragment = ip + 6;
inline constexpr std::size_t ip_ttl = ip + 8;
inline constexpr std::size_t ip_protocol = ip + 9;
inline constexpr std::size_t ip_checksum = ip + 10;
inline constexpr std::size_t ip_src = ip + 12;
inline constexpr std::size_t ip_dst = ip + 16;
inline constexpr std::size_t udp = ip + ipv4_size;
inline constexpr std::size_t udp_src_port = udp + 0;
inline constexpr std::size_t udp_dst_port = udp + 2;
inline constexpr std::size_t udp_length = udp + 4;
inline constexpr std::size_t udp_checksum = udp + 6;
inline constexpr std::size_t laps = udp + udp_size; // 42
} // namespace outer_off

// Offsets inside the LAPS header, from its first byte.
namespace laps_off {
inline constexpr std::size_t version_type = 0;
inline constexpr std::size_t flags = 1;
inline constexpr std::size_t anchor_count = 2;
inline constexpr std::size_t anchor_index = 3;
inline constexpr std::size_t pid = 4;
inline constexpr std::size_t time = 6;
inline constexpr std::size_t flow_id = 12;
inline constexpr std::size_t seq = 16;
inline constexpr std::size_t inner_length = 20; // DATA; ACK/PROBE_ACK: time_echo
inline constexpr std::size_t time_echo = 20;
inline constexpr std::size_t window_offset = 22; // DATA; ACK/PROBE_ACK: acked_bytes
inline constexpr std::size_t acked_bytes = 22;
inline constexpr std::size_t epoch = 24;
inline constexpr std::size_t anchors = 28;
} // namespace laps_off

// One row of the layout. LAPS names are the fields of tools/wireshark/laps.lua;
// outer names are Wireshark's eth/ip/udp fields, except ip.version_ihl and
// ip.flags_frag, bytes that Wireshark splits into bit fields. `length` is per
// item for `repeated` fields (the anchors: 4 bytes each, anchor_count of them).
struct field_position {
    std::string_view name;
    std::size_t offset; // from the start of the outer frame
    std::size_t length;
    bool repeated = false;
};

inline constexpr std::array field_layout{
    field_position{"eth.dst", outer_off::eth_dst, 6},
    field_position{"eth.src", outer_off::eth_src, 6},
    field_position{"eth.type", outer_off::eth_type, 2},
    field_position{"ip.version_ihl", outer_off::ip_version_ihl, 1},
    field_position{"ip.dsfield", outer_off::ip_tos, 1},
    field_position{"ip.len", outer_off::ip_total_length, 2},
    field_position{"ip.id", outer_off::ip_id, 2},
    field_position{"ip.flags_frag", outer_off::ip_flags_fragment, 2},
    field_position{"ip.ttl", outer_off::ip_ttl, 1},
    field_position{"ip.proto", outer_off::ip_protocol, 1},
    field_position{"ip.checksum", outer_off::ip_checksum, 2},
    field_position{"ip.src", outer_off::ip_src, 4},
    field_position{"ip.dst", outer_off::ip_dst, 4},
    field_position{"udp.srcport", outer_off::udp_src_port, 2},
    field_position{"udp.dstport", outer_off::udp_dst_port, 2},
    field_position{"udp.length", outer_off::udp_length, 2},
    field_position{"udp.checksum", outer_off::udp_checksum, 2},
    field_position{"laps.version_type", outer_off::laps + laps_off::version_type, 1},
    field_position{"laps.flags", outer_off::laps + laps_off::flags, 1},
    field_position{"laps.anchor_count", outer_off::laps + laps_off::anchor_count, 1},
    field_position{"laps.anchor_index", outer_off::laps + laps_off::anchor_index, 1},
    field_position{"laps.pid", outer_off::laps + laps_off::pid, 2},
    field_position{"laps.time", outer_off::laps + laps_off::time, 6},
    field_position{"laps.flow_id", outer_off::laps + laps_off::flow_id, 4},
    field_position{"laps.seq", outer_off::laps + laps_off::seq, 4},
    field_position{"laps.inner_length", outer_off::laps + laps_off::inner_length, 2},
    field_position{"laps.window_offset", outer_off::laps + laps_off::window_offset, 2},
    field_position{"laps.epoch", outer_off::laps + laps_off::epoch, 4},
    field_position{"laps.anchor", outer_off::laps + laps_off::anchors, anchor_size, true},
};

} // namespace laps::wire
