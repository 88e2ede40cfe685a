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

// A chain whose headers run past its first segment: its head copied, then
// parsed. Out of line so that the usual in-place parse keeps a small frame
// (no 256-byte buffer, no stack guard, fewer saved registers).
[[gnu::noinline]] parse_error parse_copied(const rte_mbuf* m, std::uint16_t udp_port, std::size_t pit_capacity,
                                           parsed_packet& out) noexcept
{
    std::array<std::uint8_t, parse_window> buf;
    return parse_head(head_of(m, buf), rte_pktmbuf_pkt_len(m), udp_port, pit_capacity, out);
}

} // namespace

parse_error parse(const rte_mbuf* m, std::uint16_t udp_port, std::size_t pit_capacity, parsed_packet& out) noexcept
{
    if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_BAD) {
        return parse_error::bad_ipv4_checksum;
    }
    // In place: the first segment is the whole frame, or (a chain as an
    // encapsulating sender builds it) holds the outer headers. parse_head
    // never reads past it. Only a chain whose headers run past its first
    // segment has its head copied.
    const std::uint32_t frame_length = rte_pktmbuf_pkt_len(m);
    const std::uint16_t first = rte_pktmbuf_data_len(m);
    const parse_error in_place =
        parse_head({rte_pktmbuf_mtod(m, const std::uint8_t*), first}, frame_length, udp_port, pit_capacity, out);
    if (first >= std::min<std::size_t>(frame_length, parse_window) || !is_truncation(in_place)) {
        return in_place;
    }
    return parse_copied(m, udp_port, pit_capacity, out);
}

parse_result parse(const rte_mbuf* m, std::uint16_t udp_port, std::size_t pit_capacity) noexcept
{
    parse_result r;
    r.error = parse(m, udp_port, pit_capacity, r.packet);
    if (!r.ok()) {
        r.packet = {};
    }
    return r;
}

classification classify(const rte_mbuf* m) noexcept
{
    classification c;
    classify(m, c);
    return c;
}

classify_status classify(const rte_mbuf* m, classification& out) noexcept
{
    const std::uint32_t frame_length = rte_pktmbuf_pkt_len(m);
    const std::uint16_t first = rte_pktmbuf_data_len(m);
    if (first >= std::min<std::size_t>(frame_length, classify_window)) {
        // In place: the first segment holds everything classify reads.
        return classify_head({rte_pktmbuf_mtod(m, const std::uint8_t*), first}, frame_length, out);
    }
    std::array<std::uint8_t, classify_window> buf;
    return classify_head(head_of(m, buf), frame_length, out);
}

} // namespace laps::wire
