#include "wire/parse.hpp"

#include "wire/bytes.hpp"

#include <cstring>

namespace laps::wire {

namespace {

inline constexpr std::uint16_t ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t ethertype_vlan = 0x8100;
inline constexpr std::uint16_t ethertype_qinq = 0x88A8;
inline constexpr std::uint8_t ip_proto_udp = 17;
inline constexpr std::uint16_t ipv4_more_fragments = 0x2000;
inline constexpr std::uint16_t ipv4_offset_mask = 0x1FFF;

// Frame bytes 20-27: no MF flag, fragment offset 0 (DF free), protocol UDP.
constexpr std::uint64_t frag_proto_mask = word_of({0x3F, 0xFF, 0, 0xFF, 0, 0, 0, 0});
constexpr std::uint64_t frag_proto_want = word_of({0, 0, 0, ip_proto_udp, 0, 0, 0, 0});

constexpr std::size_t fast_laps = outer_size; // the LAPS header's offset on the fast path

// Fills `out` and returns true only when parse_head_general would accept the
// packet and produce the same `out`; false sends the packet there.
bool parse_fast(const std::uint8_t* p, std::size_t readable, std::size_t frame_length, std::uint16_t udp_port,
                std::size_t pit_capacity, parsed_packet& out) noexcept
{
    if (readable < outer_size + laps_fixed_size || !is_plain_ipv4(p) ||
        (load_word(p + 20) & frag_proto_mask) != frag_proto_want ||
        load_be16(p + outer_off::udp_dst_port) != udp_port) {
        return false;
    }
    const std::size_t ip_length = load_be16(p + outer_off::ip_total_length);
    const std::size_t udp_length = load_be16(p + outer_off::udp_length);
    if (ether_size + ip_length > frame_length || udp_length + ipv4_size != ip_length) {
        return false;
    }
    const std::uint8_t* laps = p + fast_laps;
    const std::uint8_t version_type = laps[laps_off::version_type];
    const auto type = static_cast<std::uint8_t>(version_type & 0x0F);
    const std::size_t anchors = laps[laps_off::anchor_count];
    // ACK_RUN takes the general parser: one per several answers, and the
    // fast path stays small enough to inline into the engine's receive loop
    // (with its run block here it was not, and every packet paid a call).
    if ((version_type >> 4) != laps_version || type < static_cast<std::uint8_t>(packet_type::data) ||
        type > static_cast<std::uint8_t>(packet_type::probe_ack) || anchors > max_anchors ||
        laps[laps_off::anchor_index] > anchors) {
        return false;
    }
    const std::size_t header_size = laps_size(anchors) + trailer_size(laps[laps_off::flags]);
    if (udp_length < udp_size + header_size || fast_laps + header_size > readable) {
        return false;
    }
    const std::size_t rest = udp_length - udp_size - header_size;
    const std::uint16_t at20 = load_be16(laps + laps_off::inner_length);
    const auto t = static_cast<packet_type>(type);
    if (t == packet_type::data ? (at20 != rest || rest < ether_size) : (t == packet_type::probe && at20 != 0)) {
        return false;
    }
    const std::uint16_t pid = load_be16(laps + laps_off::pid);
    if (pit_capacity != 0 && is_ack(t) && pid >= pit_capacity) {
        return false;
    }

    out.vlan = false;
    out.vlan_tci = 0;
    out.tos = p[outer_off::ip_tos];
    out.ttl = p[outer_off::ip_ttl];
    out.src_ip = load_be32(p + outer_off::ip_src);
    out.dst_ip = load_be32(p + outer_off::ip_dst);
    out.src_port = load_be16(p + outer_off::udp_src_port);

    laps_header& h = out.header;
    h.type = t;
    h.flags = laps[laps_off::flags] & known_flags;
    h.anchor_count = static_cast<std::uint8_t>(anchors);
    h.anchor_index = laps[laps_off::anchor_index];
    h.pid = pid;
    h.time = load_be48(laps + laps_off::time);
    h.flow_id = load_be32(laps + laps_off::flow_id);
    h.seq = load_be32(laps + laps_off::seq);
    const std::uint16_t at22 = load_be16(laps + laps_off::window_offset);
    const bool answer = is_ack(t);
    h.inner_length = answer ? 0 : at20;
    h.time_echo = answer ? at20 : 0;
    h.window_offset = t == packet_type::data ? at22 : 0;
    h.acked_bytes = answer ? at22 : 0;
    h.epoch = load_be32(laps + laps_off::epoch);
    for (std::size_t i = 0; i < max_anchors; ++i) {
        h.anchors[i] = i < anchors ? load_be32(laps + laps_off::anchors + anchor_size * i) : 0;
    }
    h.run_entries = 0;
    out.laps_offset = static_cast<std::uint16_t>(fast_laps);
    out.inner_offset = static_cast<std::uint16_t>(fast_laps + header_size);
    out.frame_length = static_cast<std::uint32_t>(ether_size + ip_length);
    return true;
}

} // namespace

std::string_view to_string(parse_error e) noexcept
{
    switch (e) {
    case parse_error::ok:
        return "parse_ok";
    case parse_error::truncated_ethernet:
        return "parse_truncated_ethernet";
    case parse_error::truncated_vlan:
        return "parse_truncated_vlan";
    case parse_error::not_ipv4:
        return "parse_not_ipv4";
    case parse_error::truncated_ipv4:
        return "parse_truncated_ipv4";
    case parse_error::bad_ipv4_header:
        return "parse_bad_ipv4_header";
    case parse_error::not_udp:
        return "parse_not_udp";
    case parse_error::ipv4_fragment:
        return "parse_ipv4_fragment";
    case parse_error::truncated_udp:
        return "parse_truncated_udp";
    case parse_error::wrong_udp_port:
        return "parse_wrong_udp_port";
    case parse_error::bad_udp_length:
        return "parse_bad_udp_length";
    case parse_error::truncated_laps:
        return "parse_truncated_laps";
    case parse_error::bad_version:
        return "parse_bad_version";
    case parse_error::bad_type:
        return "parse_bad_type";
    case parse_error::too_many_anchors:
        return "parse_too_many_anchors";
    case parse_error::bad_anchor_index:
        return "parse_bad_anchor_index";
    case parse_error::bad_inner_length:
        return "parse_bad_inner_length";
    case parse_error::pid_out_of_range:
        return "parse_pid_out_of_range";
    case parse_error::bad_run_count:
        return "parse_bad_run_count";
    case parse_error::bad_ipv4_checksum:
        return "parse_bad_ipv4_checksum";
    case parse_error::count_:
        break;
    }
    return "parse_unknown";
}

parse_result parse(std::span<const std::uint8_t> packet, std::uint16_t udp_port,
                   std::size_t pit_capacity) noexcept
{
    return parse_head(packet, packet.size(), udp_port, pit_capacity);
}

parse_result parse_head(std::span<const std::uint8_t> head, std::size_t frame_length,
                        std::uint16_t udp_port, std::size_t pit_capacity) noexcept
{
    parse_result r;
    r.error = parse_head(head, frame_length, udp_port, pit_capacity, r.packet);
    if (!r.ok()) {
        r.packet = {};
    }
    return r;
}

parse_error parse_head(std::span<const std::uint8_t> head, std::size_t frame_length, std::uint16_t udp_port,
                       std::size_t pit_capacity, parsed_packet& out) noexcept
{
    if (parse_fast(head.data(), std::min(head.size(), frame_length), frame_length, udp_port, pit_capacity, out)) {
        return parse_error::ok;
    }
    return parse_head_general(head, frame_length, udp_port, pit_capacity, out);
}

parse_error parse_head_general(std::span<const std::uint8_t> head, std::size_t frame_length,
                               std::uint16_t udp_port, std::size_t pit_capacity, parsed_packet& out) noexcept
{
    out = {};
    const std::uint8_t* p = head.data();
    // `n` bytes from the frame start exist in the frame and can be read here.
    const auto have = [&](std::size_t n) noexcept { return n <= frame_length && n <= head.size(); };

    if (!have(ether_size)) {
        return parse_error::truncated_ethernet;
    }
    std::size_t l3 = ether_size;
    std::uint16_t ethertype = load_be16(p + 12);
    if (ethertype == ethertype_vlan || ethertype == ethertype_qinq) {
        if (!have(ether_size + vlan_size)) {
            return parse_error::truncated_vlan;
        }
        out.vlan = true;
        out.vlan_tci = load_be16(p + 14);
        ethertype = load_be16(p + 16);
        l3 += vlan_size;
    }
    if (ethertype != ethertype_ipv4) {
        return parse_error::not_ipv4;
    }

    // IPv4: version, header length, then the total length against the frame.
    if (!have(l3 + ipv4_size)) {
        return parse_error::truncated_ipv4;
    }
    const std::uint8_t* ip = p + l3;
    const std::size_t ihl = std::size_t{ip[0] & 0x0Fu} * 4;
    if ((ip[0] >> 4) != 4 || ihl < ipv4_size) {
        return parse_error::bad_ipv4_header;
    }
    if (!have(l3 + ihl)) {
        return parse_error::truncated_ipv4;
    }
    const std::size_t ip_length = load_be16(ip + 2);
    if (ip_length < ihl) {
        return parse_error::bad_ipv4_header;
    }
    if (l3 + ip_length > frame_length) {
        return parse_error::truncated_ipv4;
    }
    if (ip[9] != ip_proto_udp) {
        return parse_error::not_udp;
    }
    if ((load_be16(ip + 6) & (ipv4_more_fragments | ipv4_offset_mask)) != 0) {
        return parse_error::ipv4_fragment;
    }
    out.tos = ip[1];
    out.ttl = ip[8];
    out.src_ip = load_be32(ip + 12);
    out.dst_ip = load_be32(ip + 16);

    // UDP: the port decides whether this is LAPS at all, so it comes before
    // the length check (foreign traffic must not be counted as malformed).
    const std::size_t l4 = l3 + ihl;
    const std::size_t ip_payload = ip_length - ihl;
    if (ip_payload < udp_size || !have(l4 + udp_size)) {
        return parse_error::truncated_udp;
    }
    const std::uint8_t* udp = p + l4;
    if (load_be16(udp + 2) != udp_port) {
        return parse_error::wrong_udp_port;
    }
    const std::size_t udp_length = load_be16(udp + 4);
    if (udp_length != ip_payload) {
        return parse_error::bad_udp_length;
    }
    out.src_port = load_be16(udp);

    // LAPS: fixed part first, then the counts it announces, then the anchors.
    const std::size_t l5 = l4 + udp_size;
    const std::size_t payload = udp_length - udp_size;
    if (payload < laps_fixed_size || !have(l5 + laps_fixed_size)) {
        return parse_error::truncated_laps;
    }
    const std::uint8_t* laps = p + l5;
    if ((laps[laps_off::version_type] >> 4) != laps_version) {
        return parse_error::bad_version;
    }
    const std::uint8_t type = laps[laps_off::version_type] & 0x0F;
    if (type < static_cast<std::uint8_t>(packet_type::data) ||
        type > static_cast<std::uint8_t>(packet_type::credit)) {
        return parse_error::bad_type;
    }
    const std::size_t anchor_count = laps[laps_off::anchor_count];
    if (anchor_count > max_anchors) {
        return parse_error::too_many_anchors;
    }
    if (laps[laps_off::anchor_index] > anchor_count) {
        return parse_error::bad_anchor_index;
    }
    // ACK_RUN: the run block's count, read only once it is there.
    std::size_t run_block = 0;
    if (type == static_cast<std::uint8_t>(packet_type::ack_run)) {
        const std::size_t at = laps_size(anchor_count);
        if (payload < at + run_header_size || !have(l5 + at + run_header_size)) {
            return parse_error::truncated_laps;
        }
        const std::size_t entries = laps[at + run_off::count];
        if (entries == 0 || entries > max_run_entries) {
            return parse_error::bad_run_count;
        }
        run_block = run_block_size(entries);
    }
    const std::size_t header_size = laps_size(anchor_count) + run_block + trailer_size(laps[laps_off::flags]);
    if (payload < header_size || !have(l5 + header_size)) {
        return parse_error::truncated_laps;
    }
    read_laps_header(laps, out.header);

    // DATA carries exactly one host frame; control packets carry none (any
    // bytes after their header are padding and ignored).
    const std::size_t rest = payload - header_size;
    if (out.header.type == packet_type::data
            ? (out.header.inner_length != rest || rest < ether_size)
            : out.header.inner_length != 0) {
        return parse_error::bad_inner_length;
    }
    if (pit_capacity != 0 && !pid_in_range(out.header, pit_capacity)) {
        return parse_error::pid_out_of_range;
    }
    out.laps_offset = static_cast<std::uint16_t>(l5);
    out.inner_offset = static_cast<std::uint16_t>(l5 + header_size);
    out.frame_length = static_cast<std::uint32_t>(l3 + ip_length);
    return parse_error::ok;
}

} // namespace laps::wire
