#include "wire/classify.hpp"

#include "wire/bytes.hpp"
#include "wire/key_hash.hpp"
#include "wire/layout.hpp"

namespace laps::wire {

namespace {

inline constexpr std::uint16_t ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t ethertype_ipv6 = 0x86DD;
inline constexpr std::uint16_t ethertype_vlan = 0x8100;
inline constexpr std::uint16_t ethertype_qinq = 0x88A8;
inline constexpr std::size_t ipv6_size = 40;
inline constexpr std::size_t tcp_min_size = 20;
inline constexpr std::uint8_t proto_tcp = 6;
inline constexpr std::uint8_t proto_udp = 17;
// IPv6 extension headers walked to find the transport protocol.
inline constexpr std::uint8_t ext_hop_by_hop = 0;
inline constexpr std::uint8_t ext_routing = 43;
inline constexpr std::uint8_t ext_fragment = 44;
inline constexpr std::uint8_t ext_auth = 51;
inline constexpr std::uint8_t ext_dest_options = 60;
inline constexpr int max_extension_headers = 8;

classification fail(classify_status s) noexcept
{
    classification c;
    c.status = s;
    return c;
}

// Bounds for one frame: `n` bytes from the frame start exist and are readable.
struct bounds {
    std::size_t readable;
    std::size_t frame_length;

    bool have(std::size_t n) const noexcept { return n <= readable && n <= frame_length; }
};

// Fills ports (and QP) for TCP/UDP starting at `l4`; `end` is where the IP
// payload ends.
classify_status transport(const std::uint8_t* p, const bounds& b, std::size_t l4,
                          std::size_t end, classification& c) noexcept
{
    flow_key& k = c.key;
    if (k.protocol != proto_tcp && k.protocol != proto_udp) {
        return classify_status::ok;
    }
    const std::size_t need = k.protocol == proto_tcp ? tcp_min_size : udp_size;
    if (l4 + need > end || !b.have(l4 + need)) {
        return classify_status::truncated_l4;
    }
    k.src_port = load_be16(p + l4);
    k.dst_port = load_be16(p + l4 + 2);
    k.kind = flow_kind::five_tuple;
    c.l4_offset = static_cast<std::uint16_t>(l4);
    if (k.protocol == proto_udp && k.dst_port == rocev2_udp_port) {
        const std::size_t bth = l4 + udp_size;
        if (bth + bth_size > end || !b.have(bth + bth_size)) {
            return classify_status::truncated_bth;
        }
        // BTH bytes 5..7: destination QP (byte 4 is reserved).
        k.qp = (std::uint32_t{p[bth + 5]} << 16) | (std::uint32_t{p[bth + 6]} << 8) |
               std::uint32_t{p[bth + 7]};
        k.kind = flow_kind::rocev2;
    }
    return classify_status::ok;
}

classify_status ipv4(const std::uint8_t* p, const bounds& b, std::size_t l3,
                     classification& c) noexcept
{
    if (!b.have(l3 + ipv4_size)) {
        return classify_status::truncated_ipv4;
    }
    const std::uint8_t* ip = p + l3;
    const std::size_t ihl = std::size_t{ip[0] & 0x0Fu} * 4;
    if ((ip[0] >> 4) != 4 || ihl < ipv4_size) {
        return classify_status::bad_ipv4_header;
    }
    const std::size_t total = load_be16(ip + 2);
    if (total < ihl) {
        return classify_status::bad_ipv4_header;
    }
    // Frames may carry Ethernet padding after the datagram, never less than it.
    if (!b.have(l3 + ihl) || l3 + total > b.frame_length) {
        return classify_status::truncated_ipv4;
    }
    c.ip_version = 4;
    c.traffic_class = ip[1];
    c.destination = tables::address::ipv4_wire(ip + 16);
    c.key.src = tables::address::ipv4_wire(ip + 12);
    c.key.dst = c.destination;
    c.key.protocol = ip[9];
    // Fragments: no ports in most of them, so none of them uses ports.
    if ((load_be16(ip + 6) & 0x3FFF) != 0) {
        return classify_status::ok;
    }
    return transport(p, b, l3 + ihl, l3 + total, c);
}

classify_status ipv6(const std::uint8_t* p, const bounds& b, std::size_t l3,
                     classification& c) noexcept
{
    if (!b.have(l3 + ipv6_size)) {
        return classify_status::truncated_ipv6;
    }
    const std::uint8_t* ip = p + l3;
    if ((ip[0] >> 4) != 6) {
        return classify_status::bad_ipv6_header;
    }
    const std::size_t payload = load_be16(ip + 4);
    if (payload == 0) {
        // Zero is a jumbogram (RFC 2675) or nonsense; neither fits a frame here.
        return classify_status::bad_ipv6_header;
    }
    const std::size_t end = l3 + ipv6_size + payload;
    if (end > b.frame_length) {
        return classify_status::truncated_ipv6;
    }
    c.ip_version = 6;
    c.traffic_class =
        static_cast<std::uint8_t>(((ip[0] & 0x0F) << 4) | (ip[1] >> 4));
    c.destination = tables::address::ipv6_wire(ip + 24);
    c.key.src = tables::address::ipv6_wire(ip + 8);
    c.key.dst = c.destination;

    std::uint8_t next = ip[6];
    std::size_t off = l3 + ipv6_size;
    for (int i = 0;; ++i) {
        if (next != ext_hop_by_hop && next != ext_routing && next != ext_dest_options &&
            next != ext_fragment && next != ext_auth) {
            break;
        }
        if (i == max_extension_headers) {
            return classify_status::bad_ipv6_header;
        }
        if (off + 8 > end || !b.have(off + 8)) {
            return classify_status::truncated_ipv6;
        }
        const std::uint8_t* ext = p + off;
        if (next == ext_fragment) {
            // Any fragment (offset or M flag set): key by addresses and protocol.
            if ((load_be16(ext + 2) & 0xFFF9) != 0) {
                c.key.protocol = ext[0];
                return classify_status::ok;
            }
            next = ext[0];
            off += 8;
            continue;
        }
        const std::size_t len =
            next == ext_auth ? (std::size_t{ext[1]} + 2) * 4 : (std::size_t{ext[1]} + 1) * 8;
        next = ext[0];
        off += len;
    }
    c.key.protocol = next;
    return transport(p, b, off, end, c);
}

} // namespace

std::string_view to_string(classify_status s) noexcept
{
    switch (s) {
    case classify_status::ok:
        return "classify_ok";
    case classify_status::not_ip:
        return "classify_not_ip";
    case classify_status::truncated_ethernet:
        return "classify_truncated_ethernet";
    case classify_status::truncated_vlan:
        return "classify_truncated_vlan";
    case classify_status::truncated_ipv4:
        return "classify_truncated_ipv4";
    case classify_status::bad_ipv4_header:
        return "classify_bad_ipv4_header";
    case classify_status::truncated_ipv6:
        return "classify_truncated_ipv6";
    case classify_status::bad_ipv6_header:
        return "classify_bad_ipv6_header";
    case classify_status::truncated_l4:
        return "classify_truncated_l4";
    case classify_status::truncated_bth:
        return "classify_truncated_bth";
    case classify_status::count_:
        break;
    }
    return "classify_unknown";
}

std::uint32_t flow_hash(const flow_key& key, std::uint32_t seed) noexcept
{
    return key_hash(key, seed);
}

classification classify(std::span<const std::uint8_t> frame) noexcept
{
    return classify_head(frame, frame.size());
}

namespace {

// True, with `c` filled as classify_head_general would fill it, for the
// usual frame; false sends the frame there.
bool classify_fast(const std::uint8_t* p, std::size_t readable, std::size_t frame_length, classification& c) noexcept
{
    constexpr std::size_t l3 = ether_size;
    constexpr std::size_t l4 = l3 + ipv4_size;
    if (readable < l4 + udp_size) {
        return false;
    }
    const std::uint8_t protocol = p[l3 + 9];
    if (!is_plain_ipv4(p) || (protocol != proto_tcp && protocol != proto_udp) ||
        (load_be16(p + l3 + 6) & 0x3FFF) != 0) {
        return false;
    }
    const std::size_t total = load_be16(p + l3 + 2);
    const std::size_t need = protocol == proto_tcp ? tcp_min_size : udp_size;
    const std::uint16_t dst_port = load_be16(p + l4 + 2);
    if (l3 + total > frame_length || l4 + need > l3 + total || l4 + need > readable ||
        (protocol == proto_udp && dst_port == rocev2_udp_port)) {
        return false;
    }
    c.status = classify_status::ok;
    c.destination = tables::address::ipv4_wire(p + l3 + 16);
    c.key.src = tables::address::ipv4_wire(p + l3 + 12);
    c.key.dst = c.destination;
    c.key.src_port = load_be16(p + l4);
    c.key.dst_port = dst_port;
    c.key.qp = 0;
    c.key.protocol = protocol;
    c.key.kind = flow_kind::five_tuple;
    c.key.reserved = {};
    c.ip_version = 4;
    c.traffic_class = p[l3 + 1];
    c.vlan = false;
    c.vlan_tci = 0;
    c.l3_offset = static_cast<std::uint16_t>(l3);
    c.l4_offset = static_cast<std::uint16_t>(l4);
    return true;
}

} // namespace

namespace {
// The field-by-field classifier (below), by value.
classification classify_head_value(std::span<const std::uint8_t> head, std::size_t frame_length) noexcept;
} // namespace

classification classify_head(std::span<const std::uint8_t> head, std::size_t frame_length) noexcept
{
    classification c;
    classify_head(head, frame_length, c);
    return c;
}

classify_status classify_head(std::span<const std::uint8_t> head, std::size_t frame_length,
                              classification& out) noexcept
{
    if (classify_fast(head.data(), std::min(head.size(), frame_length), frame_length, out)) {
        return classify_status::ok;
    }
    return classify_head_general(head, frame_length, out);
}

classify_status classify_head_general(std::span<const std::uint8_t> head, std::size_t frame_length,
                                      classification& out) noexcept
{
    out = classify_head_value(head, frame_length);
    return out.status;
}

namespace {

classification classify_head_value(std::span<const std::uint8_t> head, std::size_t frame_length) noexcept
{
    const bounds b{head.size(), frame_length};
    const std::uint8_t* p = head.data();
    if (!b.have(ether_size)) {
        return fail(classify_status::truncated_ethernet);
    }
    classification c;
    std::size_t l3 = ether_size;
    std::uint16_t ethertype = load_be16(p + 12);
    // One 802.1Q tag, or an 802.1ad service tag and a customer tag (QinQ):
    // the frame is sprayed with its tags, as any other.
    for (int tags = 0; tags < 2 && (ethertype == ethertype_vlan || ethertype == ethertype_qinq); ++tags) {
        if (!b.have(l3 + vlan_size)) {
            return fail(classify_status::truncated_vlan);
        }
        if (!c.vlan) {
            c.vlan = true;
            c.vlan_tci = load_be16(p + l3); // the outer tag's
        }
        ethertype = load_be16(p + l3 + 2);
        l3 += vlan_size;
    }
    c.l3_offset = static_cast<std::uint16_t>(l3);
    classify_status s = classify_status::not_ip;
    if (ethertype == ethertype_ipv4) {
        s = ipv4(p, b, l3, c);
    } else if (ethertype == ethertype_ipv6) {
        s = ipv6(p, b, l3, c);
    }
    if (s != classify_status::ok) {
        return fail(s);
    }
    return c;
}

} // namespace

} // namespace laps::wire
