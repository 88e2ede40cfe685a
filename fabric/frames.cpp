#include "fabric/frames.hpp"

#include "wire/bytes.hpp"

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include <algorithm>
#include <cstring>

namespace laps::fabric {

std::uint32_t frame_count(std::uint64_t bytes, std::uint32_t frame_bytes) noexcept
{
    const std::uint64_t per = payload_per_frame(frame_bytes);
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (bytes + per - 1) / per));
}

std::uint32_t frame_payload(std::uint64_t bytes, std::uint32_t frame_bytes, std::uint32_t index) noexcept
{
    const std::uint64_t per = payload_per_frame(frame_bytes);
    const std::uint64_t before = static_cast<std::uint64_t>(index) * per;
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(per, bytes - before));
}

std::uint32_t frame_length(std::uint64_t bytes, std::uint32_t frame_bytes, std::uint32_t index) noexcept
{
    // The tag needs 12 payload bytes even when the flow has fewer left.
    const std::uint32_t payload = std::max(tag_bytes, frame_payload(bytes, frame_bytes, index));
    return std::max(min_frame, frame_headers + payload);
}

rte_mbuf* make_frame(rte_mempool* pool, const flow& f, std::uint32_t index, std::uint32_t src_ip,
                     std::uint32_t dst_ip, std::uint32_t frame_bytes) noexcept
{
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) {
        return nullptr;
    }
    const std::uint32_t length = frame_length(f.spec.bytes, frame_bytes, index);
    auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, static_cast<std::uint16_t>(length)));
    if (p == nullptr) {
        rte_pktmbuf_free(m);
        return nullptr;
    }

    auto* eth = reinterpret_cast<rte_ether_hdr*>(p);
    const auto mac_of = [](std::uint32_t ip) {
        return rte_ether_addr{{0x02, 0, static_cast<std::uint8_t>(ip >> 16), static_cast<std::uint8_t>(ip >> 8),
                               static_cast<std::uint8_t>(ip), 0}};
    };
    eth->dst_addr = mac_of(dst_ip);
    eth->src_addr = mac_of(src_ip);
    eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);

    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(p + 14);
    ip->version_ihl = 0x45;
    ip->type_of_service = 0;
    ip->total_length = rte_cpu_to_be_16(static_cast<std::uint16_t>(length - 14));
    ip->packet_id = rte_cpu_to_be_16(static_cast<std::uint16_t>(index));
    ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
    ip->time_to_live = 64;
    ip->next_proto_id = IPPROTO_UDP;
    ip->src_addr = rte_cpu_to_be_32(src_ip);
    ip->dst_addr = rte_cpu_to_be_32(dst_ip);
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);

    // One 5-tuple per flow: 16 bits of the id in the source port, the next 12
    // in the destination port (20000..24095: not RoCEv2's 4791, not LAPS's).
    auto* udp = reinterpret_cast<rte_udp_hdr*>(p + 34);
    udp->src_port = rte_cpu_to_be_16(static_cast<std::uint16_t>(f.id & 0xffff));
    udp->dst_port = rte_cpu_to_be_16(static_cast<std::uint16_t>(20000 + ((f.id >> 16) & 0xfff)));
    udp->dgram_len = rte_cpu_to_be_16(static_cast<std::uint16_t>(length - 34));
    udp->dgram_cksum = 0;

    wire::store_be32(p + frame_headers, tag_magic);
    wire::store_be32(p + frame_headers + 4, f.id);
    wire::store_be32(p + frame_headers + 8, index);
    m->hash.usr = f.id;
    return m;
}

std::optional<std::uint32_t> frame_flow(const rte_mbuf* m, std::uint32_t offset) noexcept
{
    for (const rte_mbuf* seg = m; seg != nullptr; seg = seg->next) {
        if (offset < seg->data_len) {
            return seg->hash.usr;
        }
        offset -= seg->data_len;
    }
    return std::nullopt;
}

rte_mbuf* receive_copy(const rte_mbuf* m, rte_mempool* pool) noexcept
{
    rte_mbuf* copy = rte_pktmbuf_alloc(pool);
    if (copy == nullptr) {
        return nullptr;
    }
    if (m->pkt_len > rte_pktmbuf_tailroom(copy)) {
        rte_pktmbuf_free(copy);
        return rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);
    }
    // The metadata as rte_pktmbuf_copy copies it (offload flags, hash,
    // dynamic fields such as the receive timestamp).
    __rte_pktmbuf_copy_hdr(copy, m);
    copy->ol_flags = m->ol_flags & ~(RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL);
    auto* out = rte_pktmbuf_mtod(copy, std::uint8_t*);
    copy->data_len = static_cast<std::uint16_t>(m->pkt_len);
    copy->pkt_len = m->pkt_len;
    std::uint32_t left = std::min(m->pkt_len, read_prefix);
    for (const rte_mbuf* seg = m; seg != nullptr && left > 0; seg = seg->next) {
        const std::uint32_t n = std::min<std::uint32_t>(seg->data_len, left);
        std::memcpy(out, rte_pktmbuf_mtod(seg, const std::uint8_t*), n);
        out += n;
        left -= n;
    }
    return copy;
}

std::optional<frame_tag> read_tag(const rte_mbuf* m, std::uint32_t offset) noexcept
{
    std::uint8_t buf[tag_bytes];
    if (m->pkt_len < offset + frame_headers + tag_bytes) {
        return std::nullopt;
    }
    const auto* p = static_cast<const std::uint8_t*>(rte_pktmbuf_read(m, offset + frame_headers, tag_bytes, buf));
    if (p == nullptr || wire::load_be32(p) != tag_magic) {
        return std::nullopt;
    }
    return frame_tag{wire::load_be32(p + 4), wire::load_be32(p + 8)};
}

} // namespace laps::fabric
