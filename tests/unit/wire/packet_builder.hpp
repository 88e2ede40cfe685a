#pragma once
// A fluent builder of host frames for tests (Katran-style fixtures):
//
//   auto frame = laps::test::packet_builder()
//                    .vlan(100)
//                    .ipv4("192.168.1.10", "192.168.2.20")
//                    .udp(4000, 4791)
//                    .bth(0x00abcd)
//                    .payload(64)
//                    .build();
//
// Lengths (IPv4 total, IPv6 payload, UDP) and checksums (IPv4 header,
// UDP/TCP over the pseudo-header) are filled in by build(); break them
// afterwards by editing the returned bytes. Header-only, standard C++ and
// POSIX only, so any test can include it.

#include <arpa/inet.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace laps::test {

using bytes = std::vector<std::uint8_t>;
using mac = std::array<std::uint8_t, 6>;

inline constexpr std::uint16_t ethertype_ipv4 = 0x0800;
inline constexpr std::uint16_t ethertype_ipv6 = 0x86DD;
inline constexpr std::uint16_t ethertype_arp = 0x0806;
inline constexpr std::uint16_t ethertype_vlan = 0x8100;
inline constexpr std::uint8_t ip_proto_icmp = 1;
inline constexpr std::uint8_t ip_proto_tcp = 6;
inline constexpr std::uint8_t ip_proto_udp = 17;
inline constexpr std::uint16_t rocev2_port = 4791;

class packet_builder {
public:
    packet_builder& eth(const mac& dst, const mac& src)
    {
        _dst_mac = dst;
        _src_mac = src;
        return *this;
    }

    // Forces the (innermost) ethertype, for non-IP frames or lies.
    packet_builder& ethertype(std::uint16_t type)
    {
        _ethertype = type;
        return *this;
    }

    packet_builder& vlan(std::uint16_t tci, std::uint16_t tpid = ethertype_vlan)
    {
        _vlan = vlan_tag{tpid, tci};
        return *this;
    }

    packet_builder& ipv4(std::string_view src, std::string_view dst)
    {
        _l3 = l3_kind::ipv4;
        _src_ip = parse_ip(AF_INET, src);
        _dst_ip = parse_ip(AF_INET, dst);
        return *this;
    }

    packet_builder& ipv6(std::string_view src, std::string_view dst)
    {
        _l3 = l3_kind::ipv6;
        _src_ip = parse_ip(AF_INET6, src);
        _dst_ip = parse_ip(AF_INET6, dst);
        return *this;
    }

    // IPv4 TOS / IPv6 traffic class.
    packet_builder& tos(std::uint8_t value)
    {
        _tos = value;
        return *this;
    }

    packet_builder& ttl(std::uint8_t value)
    {
        _ttl = value;
        return *this;
    }

    packet_builder& ipv4_id(std::uint16_t value)
    {
        _ip_id = value;
        return *this;
    }

    // IPv4 flags+fragment offset as on the wire (0x4000 = DF, 0x2000 = MF).
    packet_builder& ipv4_fragment(std::uint16_t flags_offset)
    {
        _frag = flags_offset;
        return *this;
    }

    // IPv4 options: padded to a multiple of 4 bytes with zeros (EOL).
    packet_builder& ipv4_options(std::span<const std::uint8_t> options)
    {
        _ip_options.assign(options.begin(), options.end());
        while (_ip_options.size() % 4 != 0) {
            _ip_options.push_back(0);
        }
        return *this;
    }

    // An IPv6 extension header of `type` (0, 43, 60: 8 * n bytes) in the chain.
    packet_builder& ipv6_extension(std::uint8_t type, std::size_t length = 8)
    {
        _ext.push_back(extension{type, length, 0});
        return *this;
    }

    // An IPv6 fragment header; `offset_flags` is bytes 2..3 (offset << 3 | M).
    packet_builder& ipv6_fragment(std::uint16_t offset_flags)
    {
        _ext.push_back(extension{44, 8, offset_flags});
        return *this;
    }

    // An IP protocol with no header of its own (ICMP, GRE...): payload follows IP.
    packet_builder& protocol(std::uint8_t proto)
    {
        _l4 = l4_kind::raw;
        _protocol = proto;
        return *this;
    }

    packet_builder& udp(std::uint16_t sport, std::uint16_t dport)
    {
        _l4 = l4_kind::udp;
        _protocol = ip_proto_udp;
        _sport = sport;
        _dport = dport;
        return *this;
    }

    packet_builder& tcp(std::uint16_t sport, std::uint16_t dport, std::uint32_t seq = 1,
                        std::uint8_t flags = 0x18)
    {
        _l4 = l4_kind::tcp;
        _protocol = ip_proto_tcp;
        _sport = sport;
        _dport = dport;
        _tcp_seq = seq;
        _tcp_flags = flags;
        return *this;
    }

    // RoCEv2 Base Transport Header after UDP (use udp(x, 4791)), and a 4-byte
    // ICRC (zeros) after the payload.
    packet_builder& bth(std::uint32_t dest_qp, std::uint8_t opcode = 0x04, std::uint32_t psn = 0)
    {
        _bth = bth_fields{dest_qp & 0xFFFFFF, opcode, psn & 0xFFFFFF};
        return *this;
    }

    packet_builder& payload(std::span<const std::uint8_t> data)
    {
        _payload.assign(data.begin(), data.end());
        return *this;
    }

    packet_builder& payload(std::string_view text)
    {
        _payload.assign(text.begin(), text.end());
        return *this;
    }

    // `n` bytes of a counting pattern (0, 1, 2, ...), easy to recognise in dumps.
    packet_builder& payload(std::size_t n)
    {
        _payload.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            _payload[i] = static_cast<std::uint8_t>(i);
        }
        return *this;
    }

    bytes build() const
    {
        bytes l4 = build_l4();
        bytes out;
        append(out, _dst_mac);
        append(out, _src_mac);
        if (_vlan) {
            put16(out, _vlan->tpid);
            put16(out, _vlan->tci);
        }
        std::uint16_t type = _ethertype.value_or(_l3 == l3_kind::ipv6   ? ethertype_ipv6
                                                 : _l3 == l3_kind::ipv4 ? ethertype_ipv4
                                                                        : ethertype_arp);
        put16(out, type);
        if (_l3 == l3_kind::ipv4) {
            build_ipv4(out, l4);
        } else if (_l3 == l3_kind::ipv6) {
            build_ipv6(out, l4);
        } else {
            out.insert(out.end(), _payload.begin(), _payload.end());
        }
        return out;
    }

private:
    enum class l3_kind { none, ipv4, ipv6 };
    enum class l4_kind { none, raw, udp, tcp };
    struct vlan_tag {
        std::uint16_t tpid;
        std::uint16_t tci;
    };
    struct extension {
        std::uint8_t type;
        std::size_t length;
        std::uint16_t fragment;
    };
    struct bth_fields {
        std::uint32_t qp;
        std::uint8_t opcode;
        std::uint32_t psn;
    };

    static bytes parse_ip(int family, std::string_view text)
    {
        const std::string s(text);
        bytes b(family == AF_INET ? 4 : 16);
        if (inet_pton(family, s.c_str(), b.data()) != 1) {
            throw std::invalid_argument("packet_builder: bad address " + s);
        }
        return b;
    }

    static void put16(bytes& out, std::uint32_t v)
    {
        out.push_back(static_cast<std::uint8_t>(v >> 8));
        out.push_back(static_cast<std::uint8_t>(v));
    }

    static void put32(bytes& out, std::uint32_t v)
    {
        put16(out, v >> 16);
        put16(out, v & 0xFFFF);
    }

    template <typename T>
    static void append(bytes& out, const T& data)
    {
        out.insert(out.end(), data.begin(), data.end());
    }

    static void set16(bytes& b, std::size_t off, std::uint16_t v)
    {
        b[off] = static_cast<std::uint8_t>(v >> 8);
        b[off + 1] = static_cast<std::uint8_t>(v);
    }

    // One's complement sum of 16-bit big-endian words.
    static std::uint32_t sum16(std::span<const std::uint8_t> data, std::uint32_t sum = 0)
    {
        for (std::size_t i = 0; i + 1 < data.size(); i += 2) {
            sum += (std::uint32_t{data[i]} << 8) | data[i + 1];
        }
        if (data.size() % 2 != 0) {
            sum += std::uint32_t{data.back()} << 8;
        }
        return sum;
    }

    static std::uint16_t fold(std::uint32_t sum)
    {
        while (sum >> 16) {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        return static_cast<std::uint16_t>(~sum);
    }

    bytes build_l4() const
    {
        bytes l4;
        if (_l4 == l4_kind::udp) {
            put16(l4, _sport);
            put16(l4, _dport);
            put16(l4, 0); // length, below
            put16(l4, 0); // checksum, in build_ipv4/6
        } else if (_l4 == l4_kind::tcp) {
            put16(l4, _sport);
            put16(l4, _dport);
            put32(l4, _tcp_seq);
            put32(l4, 0);              // ack
            l4.push_back(5 << 4);      // data offset 5 words
            l4.push_back(_tcp_flags);
            put16(l4, 0xFFFF);         // window
            put16(l4, 0);              // checksum
            put16(l4, 0);              // urgent
        }
        if (_bth) {
            l4.push_back(_bth->opcode);
            l4.push_back(0x40); // SE=0 M=1 pad=0 tver=0
            put16(l4, 0xFFFF);  // default P_Key
            l4.push_back(0);    // reserved
            l4.push_back(static_cast<std::uint8_t>(_bth->qp >> 16));
            put16(l4, _bth->qp & 0xFFFF);
            put32(l4, _bth->psn);
        }
        append(l4, _payload);
        if (_bth) {
            put32(l4, 0); // ICRC placeholder
        }
        if (_l4 == l4_kind::udp) {
            set16(l4, 4, static_cast<std::uint16_t>(l4.size()));
        }
        return l4;
    }

    std::uint32_t pseudo_sum(std::size_t l4_length) const
    {
        std::uint32_t sum = sum16(_src_ip);
        sum = sum16(_dst_ip, sum);
        sum += _protocol;
        sum += static_cast<std::uint32_t>(l4_length & 0xFFFF) +
               static_cast<std::uint32_t>(l4_length >> 16);
        return sum;
    }

    void l4_checksum(bytes& l4) const
    {
        const std::size_t off = _l4 == l4_kind::udp ? 6 : _l4 == l4_kind::tcp ? 16 : 0;
        if (off == 0) {
            return;
        }
        std::uint16_t c = fold(sum16(l4, pseudo_sum(l4.size())));
        if (_l4 == l4_kind::udp && c == 0) {
            c = 0xFFFF; // 0 means "no checksum" for UDP
        }
        set16(l4, off, c);
    }

    void build_ipv4(bytes& out, bytes& l4) const
    {
        l4_checksum(l4);
        const std::size_t hlen = 20 + _ip_options.size();
        const std::size_t start = out.size();
        out.push_back(static_cast<std::uint8_t>(0x40 | (hlen / 4)));
        out.push_back(_tos);
        put16(out, static_cast<std::uint32_t>(hlen + l4.size()));
        put16(out, _ip_id);
        put16(out, _frag);
        out.push_back(_ttl);
        out.push_back(_l4 == l4_kind::none ? 0xFD : _protocol); // 253: experimental
        put16(out, 0);
        append(out, _src_ip);
        append(out, _dst_ip);
        append(out, _ip_options);
        const std::span<const std::uint8_t> header(out.data() + start, hlen);
        set16(out, start + 10, fold(sum16(header)));
        append(out, l4);
    }

    void build_ipv6(bytes& out, bytes& l4) const
    {
        l4_checksum(l4);
        bytes ext;
        std::uint8_t first = _l4 == l4_kind::none ? 59 : _protocol; // 59: no next header
        for (std::size_t i = 0; i < _ext.size(); ++i) {
            const std::uint8_t next = i + 1 < _ext.size() ? _ext[i + 1].type : first;
            const std::size_t start = ext.size();
            ext.resize(start + _ext[i].length, 0);
            ext[start] = next;
            if (_ext[i].type == 44) {
                set16(ext, start + 2, _ext[i].fragment);
            } else {
                ext[start + 1] = static_cast<std::uint8_t>(_ext[i].length / 8 - 1);
            }
        }
        if (!_ext.empty()) {
            first = _ext.front().type;
        }
        put32(out, 0x60000000u | (std::uint32_t{_tos} << 20));
        put16(out, static_cast<std::uint32_t>(ext.size() + l4.size()));
        out.push_back(first);
        out.push_back(_ttl);
        append(out, _src_ip);
        append(out, _dst_ip);
        append(out, ext);
        append(out, l4);
    }

    mac _dst_mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
    mac _src_mac{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
    std::optional<std::uint16_t> _ethertype;
    std::optional<vlan_tag> _vlan;
    l3_kind _l3 = l3_kind::none;
    bytes _src_ip;
    bytes _dst_ip;
    std::uint8_t _tos = 0;
    std::uint8_t _ttl = 64;
    std::uint16_t _ip_id = 0;
    std::uint16_t _frag = 0x4000;
    bytes _ip_options;
    std::vector<extension> _ext;
    l4_kind _l4 = l4_kind::none;
    std::uint8_t _protocol = 0;
    std::uint16_t _sport = 0;
    std::uint16_t _dport = 0;
    std::uint32_t _tcp_seq = 0;
    std::uint8_t _tcp_flags = 0;
    std::optional<bth_fields> _bth;
    bytes _payload;
};

} // namespace laps::test
