#pragma once
// Host-frame classification on the sender side: the destination address the
// PST is keyed by, and the flow key the flow table (rte_hash) is keyed by.
//
// Flow keys: TCP/UDP by 5-tuple; RoCEv2 (UDP dport 4791) additionally by the
// BTH destination QP, since one UDP 5-tuple often carries many QPs; other IP
// protocols and IP fragments by (src, dst, protocol), so every fragment of a
// datagram lands in the same flow whether or not it carries the ports.

#include "tables/address.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

namespace laps::wire {

inline constexpr std::uint16_t rocev2_udp_port = 4791;
inline constexpr std::size_t bth_size = 12;

enum class classify_status : std::uint8_t {
    ok,
    not_ip,             // not IPv4/IPv6 (ARP, LLDP, three tags...): engine.non_ip decides
    truncated_ethernet,
    truncated_vlan,
    truncated_ipv4,     // header, options or total length beyond the frame
    bad_ipv4_header,    // version != 4, IHL < 5, total length < header
    truncated_ipv6,     // header, payload length or an extension header beyond the frame
    bad_ipv6_header,    // version != 6, jumbogram, extension chain too long
    truncated_l4,       // TCP/UDP header cut short
    truncated_bth,      // RoCEv2 packet shorter than its BTH
    count_,
};

inline constexpr std::size_t classify_status_count =
    static_cast<std::size_t>(classify_status::count_);

// Counter name: "classify_ok", "classify_not_ip", ...
std::string_view to_string(classify_status s) noexcept;

enum class flow_kind : std::uint8_t {
    three_tuple = 0, // src, dst, protocol
    five_tuple = 1,  // + ports (TCP, UDP)
    rocev2 = 2,      // + ports + BTH destination QP
};

// Fixed-size, zero-padded and hole-free: rte_hash compares and hashes the raw
// bytes, so two equal flows must have identical bytes. Ports and QP are in
// host order; unused fields stay 0. 48 bytes, 8-aligned: rte_hash_crc reads it
// as six aligned 64-bit words.
struct alignas(8) flow_key {
    tables::address src;
    tables::address dst;
    std::uint16_t src_port = 0;
    std::uint16_t dst_port = 0;
    std::uint32_t qp = 0; // 24 bits
    std::uint8_t protocol = 0;
    flow_kind kind = flow_kind::three_tuple;
    std::array<std::uint8_t, 6> reserved{};

    bool operator==(const flow_key&) const = default;
};

static_assert(sizeof(flow_key) == 48);
static_assert(std::has_unique_object_representations_v<flow_key>, "flow_key has padding");

// CRC32 of the key bytes (rte_hash_crc: SSE4.2 or Armv8 CRC when present, the
// same value either way). An rte_hash created with key_len = sizeof(flow_key),
// hash_func = rte_hash_crc and hash_func_init_val = seed computes the same
// value, so the engine can hash once and call rte_hash_lookup_with_hash.
std::uint32_t flow_hash(const flow_key& key, std::uint32_t seed = 0) noexcept;

// For std::unordered_map in tests and the testbed.
struct flow_key_hasher {
    std::size_t operator()(const flow_key& key) const noexcept { return flow_hash(key); }
};

struct classification {
    classify_status status = classify_status::ok;
    tables::address destination; // IPv4 stored IPv4-mapped
    flow_key key;
    std::uint8_t ip_version = 0;    // 4 or 6
    std::uint8_t traffic_class = 0; // IPv4 TOS / IPv6 traffic class
    bool vlan = false;
    std::uint16_t vlan_tci = 0;
    std::uint16_t l3_offset = 0;
    std::uint16_t l4_offset = 0; // 0 when the key has no ports

    bool ok() const noexcept { return status == classify_status::ok; }
};

// Classifies a host Ethernet frame (one 802.1Q tag, or two: QinQ).
classification classify(std::span<const std::uint8_t> frame) noexcept;

// Most bytes classify() reads for IPv4 (18 + 60 + 20 + 12); IPv6 extension
// headers may need more, up to classify_window.
inline constexpr std::size_t classify_window = 256;

// For frames that are not contiguous: `head` holds the first
// min(frame_length, classify_window) bytes. Headers beyond `head` fail as
// truncated; nothing past `head` is read.
classification classify_head(std::span<const std::uint8_t> head, std::size_t frame_length) noexcept;

// The same into the caller's `out` (the data path: nothing zeroed or
// copied). The usual frame (untagged IPv4 without options, TCP or UDP, not
// a fragment, not RoCEv2) is recognised by a masked word compare and read
// once; anything else takes classify_head_general. Returns out.status.
classify_status classify_head(std::span<const std::uint8_t> head, std::size_t frame_length,
                              classification& out) noexcept;

// Every case, without the fast path: the reference it must agree with
// (tests/unit/wire compares the two on mutated frames).
classify_status classify_head_general(std::span<const std::uint8_t> head, std::size_t frame_length,
                                      classification& out) noexcept;

} // namespace laps::wire
