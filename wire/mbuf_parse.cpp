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
    const std::uint32_t frame_length = rte_pktmbuf_pkt_len(m);
    const std::uint16_t first = rte_pktmbuf_data_len(m);
    if (m->nb_segs > 1 && first < std::min<std::size_t>(frame_length, parse_window)) {
        // A chain whose first segment holds the outer headers (what an
        // encapsulating sender builds): parse them in place. Only when they
        // do not fit is the head copied; parse_head never reads past `first`.
        const parse_result in_place =
            parse_head({rte_pktmbuf_mtod(m, const std::uint8_t*), first}, frame_length, udp_port, pit_capacity);
        if (!is_truncation(in_place.error)) {
            return in_place;
        }
    }
    std::array<std::uint8_t, parse_window> buf;
    return parse_head(head_of(m, buf), frame_length, udp_port, pit_capacity);
}

classification classify(const rte_mbuf* m) noexcept
{
    std::array<std::uint8_t, classify_window> buf;
    return classify_head(head_of(m, buf), rte_pktmbuf_pkt_len(m));
}

} // namespace laps::wire
