#pragma once
// Host frames: what a flow's sender hands its transport. IPv4/UDP, one
// distinct 5-tuple per flow (source port and destination port from the flow
// id). Their payload starts with a tag (magic, flow id, frame index) so that
// the receiver can count every frame once and the fabric can tell which flow
// a DATA packet carries. The RoCE NIC model sends the same payload per packet
// without building the frames.

#include "fabric/flow.hpp"

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
rte_mbuf* make_frame(rte_mempool* pool, const flow& f, std::uint32_t index, std::uint32_t src_ip,
                     std::uint32_t dst_ip, std::uint32_t frame_bytes) noexcept;

struct frame_tag {
    std::uint32_t flow = 0;
    std::uint32_t index = 0;
};

// The tag of the host frame that starts `offset` bytes into `m` (0 for a
// delivered frame, the inner offset for a DATA packet); nullopt when absent.
std::optional<frame_tag> read_tag(const rte_mbuf* m, std::uint32_t offset) noexcept;

} // namespace laps::fabric
