#include "wire/encode.hpp"

#include "wire/bytes.hpp"

#include <rte_ip.h>

#include <cstring>

namespace laps::wire {

namespace {

inline constexpr std::uint16_t ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t ipv4_dont_fragment = 0x4000;
inline constexpr std::uint8_t ip_proto_udp = 17;

// ACK_RUN is not among them: its run block is not in a laps_header, and
// only header_writer::answer_run writes one.
bool known_type(packet_type t) noexcept
{
    return t == packet_type::data || t == packet_type::ack || t == packet_type::probe ||
           t == packet_type::probe_ack || t == packet_type::credit;
}

std::size_t encode_control(std::span<std::uint8_t> out, const outer_config& cfg,
                           const packet_spec& spec, packet_type expected) noexcept
{
    if (spec.header.type != expected) {
        return 0;
    }
    return encode_headers(out, cfg, spec, 0);
}

} // namespace

std::size_t encode_headers(std::span<std::uint8_t> out, const outer_config& cfg,
                           const packet_spec& spec, std::size_t inner_length) noexcept
{
    const laps_header& h = spec.header;
    if (!known_type(h.type) || h.anchor_count > max_anchors || h.anchor_index > h.anchor_count) {
        return 0;
    }
    if (h.type == packet_type::data ? inner_length < ether_size : inner_length != 0) {
        return 0;
    }
    const std::size_t size = headers_size(h);
    const std::size_t ip_length = size - ether_size + inner_length;
    if (out.size() < size || ip_length > 0xFFFF) {
        return 0;
    }
    std::uint8_t* p = out.data();

    std::memcpy(p + outer_off::eth_dst, cfg.next_hop_mac.data(), 6);
    std::memcpy(p + outer_off::eth_src, cfg.own_mac.data(), 6);
    store_be16(p + outer_off::eth_type, ethertype_ipv4);

    p[outer_off::ip_version_ihl] = 0x45;
    p[outer_off::ip_tos] = cfg.class_of(h.type).tos();
    store_be16(p + outer_off::ip_total_length, static_cast<std::uint16_t>(ip_length));
    store_be16(p + outer_off::ip_id, 0);
    store_be16(p + outer_off::ip_flags_fragment, ipv4_dont_fragment);
    p[outer_off::ip_ttl] = cfg.ttl;
    p[outer_off::ip_protocol] = ip_proto_udp;
    store_be16(p + outer_off::ip_checksum, 0);
    store_be32(p + outer_off::ip_src, cfg.own_ip);
    store_be32(p + outer_off::ip_dst, spec.dst_ip);
    // rte_ipv4_cksum returns the sum in the byte order it read, so it is
    // stored as is, not converted.
    const std::uint16_t cksum =
        rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(p + outer_off::ip));
    std::memcpy(p + outer_off::ip_checksum, &cksum, sizeof cksum);

    store_be16(p + outer_off::udp_src_port, udp_source_port(spec.entropy));
    store_be16(p + outer_off::udp_dst_port, cfg.udp_port);
    store_be16(p + outer_off::udp_length, static_cast<std::uint16_t>(ip_length - ipv4_size));
    // Zero: allowed for UDP over IPv4, and a real one would cost a pass over
    // the inner frame (docs/wire-format.md §6).
    store_be16(p + outer_off::udp_checksum, 0);

    laps_header written = h;
    written.inner_length = static_cast<std::uint16_t>(inner_length);
    write_laps_header(p + outer_off::laps, written);
    // The trailer, if announced: zeros until an authenticator signs it.
    std::memset(p + outer_off::laps + h.size(), 0, trailer_size(h.flags));
    return size;
}

std::size_t encode_data(std::span<std::uint8_t> out, const outer_config& cfg,
                        const packet_spec& spec, std::span<const std::uint8_t> inner) noexcept
{
    if (spec.header.type != packet_type::data ||
        out.size() < headers_size(spec.header) + inner.size()) {
        return 0;
    }
    const std::size_t size = encode_headers(out, cfg, spec, inner.size());
    if (size == 0) {
        return 0;
    }
    if (!inner.empty()) {
        std::memcpy(out.data() + size, inner.data(), inner.size());
    }
    return size + inner.size();
}

std::size_t encode_ack(std::span<std::uint8_t> out, const outer_config& cfg,
                       const packet_spec& spec) noexcept
{
    return encode_control(out, cfg, spec, packet_type::ack);
}

std::size_t encode_probe(std::span<std::uint8_t> out, const outer_config& cfg,
                         const packet_spec& spec) noexcept
{
    return encode_control(out, cfg, spec, packet_type::probe);
}

std::size_t encode_probe_ack(std::span<std::uint8_t> out, const outer_config& cfg,
                             const packet_spec& spec) noexcept
{
    return encode_control(out, cfg, spec, packet_type::probe_ack);
}

} // namespace laps::wire
