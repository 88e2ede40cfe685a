#pragma once
// Host frames: what a flow's sender hands its transport. IPv4/UDP, one
// distinct 5-tuple per flow (source port and destination port from the flow
// id). Their payload starts with a tag (magic, flow id, frame index) so that
// the receiver can count every frame once and the fabric can tell which flow
// a DATA packet carries. The RoCE NIC model sends the same payload per packet
// without building the frames.

#include "fabric/flow.hpp"
#include "wire/layout.hpp"

#include <rte_mbuf.h>

#include <cstdint>
#include <optional>

namespace laps::fabric {

// Host-frame layout: Ethernet 14 + IPv4 20 + UDP 8, then the tag.
inline constexpr std::uint32_t frame_headers = 42;
inline constexpr std::uint32_t tag_bytes = 12;
inline constexpr std::uint32_t tag_magic = 0x4c544246; // "LTBF"
inline constexpr std::uint32_t min_frame = 60;         // Ethernet minimum without FCS

// Payload bytes per full frame of `frame_bytes`.
constexpr std::uint32_t payload_per_frame(std::uint32_t frame_bytes) noexcept
{
    return frame_bytes - frame_headers;
}

// Application bytes in frame `index` of a flow of `bytes`.
std::uint32_t frame_payload(std::uint64_t bytes, std::uint32_t frame_bytes, std::uint32_t index) noexcept;
// Its length as an Ethernet frame.
std::uint32_t frame_length(std::uint64_t bytes, std::uint32_t frame_bytes, std::uint32_t index) noexcept;
std::uint32_t frame_count(std::uint64_t bytes, std::uint32_t frame_bytes) noexcept;

// Builds frame `index` of flow `f` from `pool`; nullptr when the pool is empty.
// Only its headers and tag are written: nothing in the testbed reads the
// payload after them (no checksum covers it, nothing captures it), so its
// bytes are what the buffer held, and only its length counts.
rte_mbuf* make_frame(rte_mempool* pool, const flow& f, std::uint32_t index, std::uint32_t src_ip,
                     std::uint32_t dst_ip, std::uint32_t frame_bytes) noexcept;

// The bytes of a packet the testbed reads past the fabric: the outer and
// LAPS headers at their largest (anchors, authentication trailer, a VLAN
// tag), then the host frame's headers and tag.
inline constexpr std::uint32_t read_prefix =
    static_cast<std::uint32_t>(wire::max_overhead_authenticated + wire::vlan_size) + frame_headers + tag_bytes;
static_assert(read_prefix == 164, "docs/testbed.md (Delivery) gives this size");

// A NIC's receive DMA: `m` as one segment in a buffer of `pool`, with its
// length and metadata, its first `read_prefix` bytes copied (the rest is
// payload nobody reads, see make_frame). nullptr when the pool is empty. A
// packet longer than one buffer is copied whole, as a chain.
rte_mbuf* receive_copy(const rte_mbuf* m, rte_mempool* pool) noexcept;

struct frame_tag {
    std::uint32_t flow = 0;
    std::uint32_t index = 0;
};

// The tag of the host frame that starts `offset` bytes into `m` (0 for a
// delivered frame, the inner offset for a DATA packet); nullopt when absent.
std::optional<frame_tag> read_tag(const rte_mbuf* m, std::uint32_t offset) noexcept;

// make_frame also leaves the flow's id in the mbuf's user tag (hash.usr),
// which an engine neither reads nor changes and an indirect mbuf attached to
// the frame copies. The flow of the host frame that starts `offset` bytes
// into `m` (the segment holding that byte), read from the mbuf's first line:
// when its engine sends a DATA, the frame's own bytes have often left the
// cache. nullopt when `m` is shorter than `offset`.
std::optional<std::uint32_t> frame_flow(const rte_mbuf* m, std::uint32_t offset) noexcept;

} // namespace laps::fabric
