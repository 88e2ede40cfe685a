#include "wire/mbuf_build.hpp"

#include "wire/ack.hpp"

#include <algorithm>

namespace laps::wire {

rte_mbuf* build_control(rte_mempool* pool, const outer_config& cfg,
                        const packet_spec& spec) noexcept
{
    const laps_header& h = spec.header;
    if (h.type == packet_type::data || h.anchor_count > max_anchors) {
        return nullptr;
    }
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) {
        return nullptr;
    }
    const auto size = static_cast<std::uint16_t>(headers_size(h.anchor_count));
    auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, size));
    if (p == nullptr || encode_headers({p, size}, cfg, spec, 0) == 0) {
        rte_pktmbuf_free(m);
        return nullptr;
    }
    m->l2_len = ether_size;
    m->l3_len = ipv4_size;
    return m;
}

rte_mbuf* build_ack(rte_mempool* pool, const outer_config& cfg, const parsed_packet& data,
                    common::time_ns now) noexcept
{
    if (data.header.type != packet_type::data) {
        return nullptr;
    }
    return build_control(pool, cfg, ack_for(data, now));
}

rte_mbuf* build_probe(rte_mempool* pool, const outer_config& cfg, std::uint32_t dst_ip,
                      std::uint16_t entropy, const laps_header& header) noexcept
{
    if (header.type != packet_type::probe) {
        return nullptr;
    }
    return build_control(pool, cfg, packet_spec{dst_ip, entropy, header});
}

rte_mbuf* build_probe_ack(rte_mempool* pool, const outer_config& cfg, const parsed_packet& probe,
                          common::time_ns now) noexcept
{
    if (probe.header.type != packet_type::probe) {
        return nullptr;
    }
    return build_control(pool, cfg, ack_for(probe, now));
}

rte_mbuf* build_answer(rte_mempool* pool, const header_writer& headers, const parsed_packet& received,
                       common::time_ns now) noexcept
{
    if (received.header.type != packet_type::data && received.header.type != packet_type::probe) {
        return nullptr;
    }
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) {
        return nullptr;
    }
    const auto size =
        static_cast<std::uint16_t>(headers_size(std::min<std::size_t>(received.header.anchor_count, max_anchors)));
    auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, size));
    if (p == nullptr) {
        rte_pktmbuf_free(m);
        return nullptr;
    }
    headers.answer(p, received, now);
    m->l2_len = ether_size;
    m->l3_len = ipv4_size;
    return m;
}

} // namespace laps::wire
