#include "wire/mbuf_parse.hpp"

#include <algorithm>
#include <array>

namespace laps::wire {

namespace {

// The first min(pkt_len, window) bytes of `m`: in place when the first
// segment holds them, otherwise copied into `buf`.
template <std::size_t window>
std::span<const std::uint8_t> head_of(const rte_mbuf* m, std::array<std::uint8_t, window>& buf) noexcept
{
    const auto len = static_cast<std::uint32_t>(std::min<std::size_t>(rte_pktmbuf_pkt_len(m), window));
    const void* p = rte_pktmbuf_read(m, 0, len, buf.data());
    if (p == nullptr) {
        return {};
    }
    return {static_cast<const std::uint8_t*>(p), len};
}

} // namespace

parse_result parse(const rte_mbuf* m, std::uint16_t udp_port, std::size_t pit_capacity) noexcept
{
    if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_BAD) {
        parse_result r;
        r.error = parse_error::bad_ipv4_checksum;
        return r;
    }
    std::array<std::uint8_t, parse_window> buf;
    return parse_head(head_of(m, buf), rte_pktmbuf_pkt_len(m), udp_port, pit_capacity);
}

classification classify(const rte_mbuf* m) noexcept
{
    std::array<std::uint8_t, classify_window> buf;
    return classify_head(head_of(m, buf), rte_pktmbuf_pkt_len(m));
}

} // namespace laps::wire
