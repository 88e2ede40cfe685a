#pragma once
// The example packets of docs/wire-format.md §8: one of each type, built by
// the encoder. Shared by the unit tests (which check the doc's hex dumps
// against them), the pcap generator and the Wireshark dissector test.

#include "tests/unit/wire/packet_builder.hpp"
#include "wire/ack.hpp"
#include "wire/ack_run.hpp"
#include "wire/auth.hpp"
#include "wire/encode.hpp"
#include "wire/header_writer.hpp"
#include "wire/parse.hpp"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace laps::test::wire_examples {

// Sender 10.0.0.1 sends to receiver 10.0.1.2 through switches.
inline wire::outer_config sender_config()
{
    wire::outer_config c;
    c.own_mac = {0x02, 0x1a, 0x00, 0x00, 0x00, 0x01};
    c.next_hop_mac = {0x02, 0x5e, 0x00, 0x00, 0x00, 0x01};
    c.own_ip = 0x0a000001;
    return c;
}

inline wire::outer_config receiver_config()
{
    wire::outer_config c;
    c.own_mac = {0x02, 0x1a, 0x00, 0x00, 0x00, 0x02};
    c.next_hop_mac = {0x02, 0x5e, 0x00, 0x00, 0x00, 0x02};
    c.own_ip = 0x0a000102;
    return c;
}

inline constexpr std::uint32_t receiver_ip = 0x0a000102;

// The host's frame: UDP 192.168.1.10:1000 -> 192.168.2.20:2000, "laps!!!!".
inline bytes host_frame()
{
    return packet_builder()
        .eth({0x02, 0x00, 0x00, 0x00, 0x00, 0x02}, {0x02, 0x00, 0x00, 0x00, 0x00, 0x01})
        .ipv4("192.168.1.10", "192.168.2.20")
        .udp(1000, 2000)
        .payload("laps!!!!")
        .build();
}

inline constexpr std::uint64_t data_time = 0x123456789ABC;
inline constexpr std::array<std::uint32_t, 2> data_anchors{0x0a000101, 0x0a000202};
inline constexpr std::uint64_t probe_time = 0x10000;
inline constexpr std::array<std::uint32_t, 1> probe_anchors{0x0a000303};
// The receiver's clock is 1.5 us behind the sender's: a negative latency.
inline constexpr std::int64_t data_latency = -1500;
inline constexpr std::int64_t probe_latency = 2500;
// The sender's incarnation.
inline constexpr std::uint32_t sender_epoch = 0x00c0ffee;

inline wire::packet_spec data_spec()
{
    wire::packet_spec s;
    s.dst_ip = receiver_ip;
    s.entropy = 0x1234;
    s.header = wire::make_data_header(0x0102, static_cast<common::time_ns>(data_time), 7, 42,
                                      data_anchors, false, sender_epoch);
    return s;
}

inline wire::packet_spec probe_spec()
{
    wire::packet_spec s;
    s.dst_ip = receiver_ip;
    s.entropy = 0x0042;
    s.header = wire::make_probe_header(3, static_cast<common::time_ns>(probe_time), 9, probe_anchors, sender_epoch);
    return s;
}

inline bytes encode(const wire::outer_config& cfg, const wire::packet_spec& spec,
                    std::span<const std::uint8_t> inner = {})
{
    bytes out(wire::headers_size(spec.header) + inner.size());
    const std::size_t n = spec.header.type == wire::packet_type::data
                              ? wire::encode_data(out, cfg, spec, inner)
                              : wire::encode_headers(out, cfg, spec, 0);
    if (n != out.size()) {
        throw std::logic_error("wire_examples: encode failed");
    }
    return out;
}

inline bytes data_packet()
{
    const bytes inner = host_frame();
    return encode(sender_config(), data_spec(), inner);
}

inline bytes probe_packet() { return encode(sender_config(), probe_spec()); }

// The receiver's answer to `packet`, `latency` ns after it was stamped.
inline bytes answer(const bytes& packet, std::uint64_t sent, std::int64_t latency)
{
    const wire::parse_result r = wire::parse(packet);
    if (!r.ok()) {
        throw std::logic_error("wire_examples: example does not parse");
    }
    const auto now = static_cast<common::time_ns>(sent) + latency;
    return encode(receiver_config(), wire::ack_for(r.packet, now));
}

inline bytes ack_packet() { return answer(data_packet(), data_time, data_latency); }

// The example DATA as it would be with another sequence number and time,
// optionally CE-marked on the way.
inline bytes data_packet_at(std::uint32_t seq, std::uint64_t time, bool ce_marked)
{
    wire::packet_spec spec = data_spec();
    spec.header.seq = seq;
    spec.header.time = time;
    bytes packet = encode(sender_config(), spec, host_frame());
    if (ce_marked) {
        packet[wire::outer_off::ip_tos] |= wire::ecn_ce; // as a switch marks it (checksum not redone here)
    }
    return packet;
}

// The ACK_RUN a coalescing receiver sends when the example DATA (seq 42)
// and two more of its flow and path (seq 43 stamped 800 ns later, seq 44
// 1,600 ns later and CE-marked) arrive in one burst, 500 ns after the first
// was stamped by the receiver's clock.
inline bytes ack_run_packet()
{
    const auto parsed = [](const bytes& b) { return wire::parse(b).packet; };
    const wire::parsed_packet first = parsed(data_packet());
    const auto now = static_cast<common::time_ns>(data_time) + 500;
    const std::int64_t base = wire::run_base_latency(first, now);
    std::array<wire::run_entry, 2> entries;
    if (!wire::run_entry_for(parsed(data_packet_at(43, data_time + 800, false)), now, base, entries[0]) ||
        !wire::run_entry_for(parsed(data_packet_at(44, data_time + 1600, true)), now, base, entries[1])) {
        throw std::logic_error("wire_examples: run entry does not fit");
    }
    const wire::header_writer writer(receiver_config());
    bytes out(writer.answer_run_size(first.header.anchor_count, entries.size()));
    writer.answer_run(out.data(), first, now, entries, 0b10);
    return out;
}
inline bytes probe_ack_packet() { return answer(probe_packet(), probe_time, probe_latency); }

// The 5th CREDIT the receiver grants the example DATA's flow (receiver-paced
// credits, docs/wire-format.md "CREDIT"), along the route of that DATA, as
// the data path's header writer builds it.
inline bytes credit_packet()
{
    const wire::parse_result r = wire::parse(data_packet());
    if (!r.ok()) {
        throw std::logic_error("wire_examples: example does not parse");
    }
    const wire::header_writer writer(receiver_config());
    const wire::credit_route route = wire::credit_route_of(r.packet);
    bytes out(writer.credit_size(route.anchor_count));
    writer.credit(out.data(), route, 5);
    return out;
}

// The example key of docs/security.md: bytes 00 01 ... 0f (the SipHash
// paper's test key). Never a key to deploy.
inline wire::auth_key example_key()
{
    wire::auth_key k;
    for (std::size_t i = 0; i < k.bytes.size(); ++i) {
        k.bytes[i] = static_cast<std::uint8_t>(i);
    }
    return k;
}

// The example DATA with the authentication trailer, signed with the example
// key by the sender's first counter value (docs/wire-format.md
// "Authentication").
inline bytes data_authenticated_packet()
{
    wire::packet_spec spec = data_spec();
    spec.header.flags |= wire::flag_authenticated;
    bytes packet = encode(sender_config(), spec, host_frame());
    wire::authenticator signer(example_key(), sender_epoch);
    signer.sign(packet.data(), spec.header.size());
    return packet;
}

struct example {
    std::string name; // as in the doc's "<!-- example: name -->" markers
    bytes packet;
};

inline std::vector<example> all()
{
    return {{"data", data_packet()},
            {"ack", ack_packet()},
            {"probe", probe_packet()},
            {"probe_ack", probe_ack_packet()},
            {"ack_run", ack_run_packet()},
            {"data_authenticated", data_authenticated_packet()},
            {"credit", credit_packet()}};
}

} // namespace laps::test::wire_examples
