#include "wire/mbuf_build.hpp"

#include "wire/ack.hpp"

#include <algorithm>

namespace laps::wire {

namespace {

// A control packet of `size` bytes of headers, written by `write(p)`, which
// returns false when it cannot.
template <typename Write>
rte_mbuf* build_with(rte_mempool* pool, std::uint16_t size, Write&& write) noexcept
{
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) {
        return nullptr;
    }
    auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, size));
    if (p == nullptr || !write(p)) {
        rte_pktmbuf_free(m);
        return nullptr;
    }
    m->l2_len = ether_size;
    m->l3_len = ipv4_size;
    return m;
}

} // namespace

rte_mbuf* build_control(rte_mempool* pool, const outer_config& cfg,
                        const packet_spec& spec) noexcept
{
    const laps_header& h = spec.header;
    if (h.type == packet_type::data || h.anchor_count > max_anchors) {
        return nullptr;
    }
    const auto size = static_cast<std::uint16_t>(headers_size(h));
    return build_with(pool, size, [&](std::uint8_t* p) noexcept { return encode_headers({p, size}, cfg, spec, 0) != 0; });
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
    const auto size = static_cast<std::uint16_t>(
        headers.answer_size(std::min<std::size_t>(received.header.anchor_count, max_anchors)));
    return build_with(pool, size, [&](std::uint8_t* p) noexcept {
        headers.answer(p, received, now);
        return true;
    });
}

rte_mbuf* build_credit(rte_mempool* pool, const header_writer& headers, const credit_route& route,
                       std::uint32_t granted) noexcept
{
    return build_with(pool, static_cast<std::uint16_t>(headers.credit_size(route.anchor_count)),
                      [&](std::uint8_t* p) noexcept {
                          headers.credit(p, route, granted);
                          return true;
                      });
}

} // namespace laps::wire
