#include "wire/header_writer.hpp"

#include "wire/bytes.hpp"
#include "wire/encode.hpp"

#include <algorithm>
#include <cstring>

namespace laps::wire {

namespace {

std::uint32_t fold(std::uint32_t sum) noexcept
{
    sum = (sum & 0xFFFF) + (sum >> 16);
    return (sum & 0xFFFF) + (sum >> 16);
}

} // namespace

outer_template::outer_template(const outer_config& cfg, packet_type type) noexcept
{
    // The reference encoder writes the fixed fields; length, destination
    // and the source port are patched per packet.
    packet_spec spec;
    spec.header.type = type;
    std::array<std::uint8_t, outer_size + laps_max_size> full{};
    encode_headers(full, cfg, spec, type == packet_type::data ? ether_size : 0);
    std::copy_n(full.begin(), outer_size, _bytes.begin());
    store_be16(_bytes.data() + outer_off::ip_total_length, 0);
    store_be16(_bytes.data() + outer_off::ip_checksum, 0);
    store_be32(_bytes.data() + outer_off::ip_dst, 0);
    store_be16(_bytes.data() + outer_off::udp_src_port, 0);
    store_be16(_bytes.data() + outer_off::udp_length, 0);
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i < ipv4_size; i += 2) {
        sum += load_be16(_bytes.data() + outer_off::ip + i);
    }
    _fixed_sum = fold(sum);
}

void outer_template::write(std::uint8_t* out, std::uint32_t dst_ip, std::uint16_t entropy,
                           std::uint16_t ip_length) const noexcept
{
    std::memcpy(out, _bytes.data(), outer_size); // a constant size: a few moves, not a memmove call
    store_be16(out + outer_off::ip_total_length, ip_length);
    store_be32(out + outer_off::ip_dst, dst_ip);
    const std::uint32_t sum = fold(_fixed_sum + ip_length + (dst_ip >> 16) + (dst_ip & 0xFFFF));
    store_be16(out + outer_off::ip_checksum, static_cast<std::uint16_t>(~sum));
    store_be16(out + outer_off::udp_src_port, udp_source_port(entropy));
    store_be16(out + outer_off::udp_length, static_cast<std::uint16_t>(ip_length - ipv4_size));
}

std::size_t header_writer::data(std::uint8_t* out, std::uint32_t dst_ip, std::uint16_t entropy, const data_fields& f,
                                std::span<const std::uint32_t> anchors, std::uint16_t inner_length) const noexcept
{
    const std::size_t n = anchors.size();
    const std::size_t size = data_size(n);
    _data.write(out, dst_ip, entropy, static_cast<std::uint16_t>(size - ether_size + inner_length));
    std::uint8_t* laps = out + outer_off::laps;
    write_laps_fixed(laps, packet_type::data,
                     static_cast<std::uint8_t>((f.resend ? flag_retransmit : 0) | (f.pull ? flag_pull : 0) | _flags),
                     static_cast<std::uint8_t>(n), 0, f.pid,
                     to_time48(f.now), f.flow_id, f.seq, inner_length, f.window_offset, f.epoch);
    for (std::size_t i = 0; i < n; ++i) {
        store_be32(laps + laps_off::anchors + anchor_size * i, anchors[i]);
    }
    return size;
}

std::size_t header_writer::answer(std::uint8_t* out, const parsed_packet& received, common::time_ns now) const noexcept
{
    const std::size_t size = answer_size(std::min<std::size_t>(received.header.anchor_count, max_anchors));
    write_answer(out, received, now, answer_type(received.header.type), size);
    return size;
}

std::size_t header_writer::answer_run(std::uint8_t* out, const parsed_packet& first, common::time_ns now,
                                      std::span<const run_entry> entries, std::uint32_t ecn_echo_bits) const noexcept
{
    const std::size_t n = std::min<std::size_t>(first.header.anchor_count, max_anchors);
    const std::size_t size = answer_run_size(n, entries.size());
    write_answer(out, first, now, packet_type::ack_run, size);
    write_run_block(out + outer_off::laps + laps_size(n), entries, ecn_echo_bits);
    return size;
}

std::size_t header_writer::finish_run(std::uint8_t* out, std::uint32_t dst_ip, std::uint16_t entropy,
                                      std::size_t anchor_count, std::size_t entries,
                                      std::uint32_t ecn_echo_bits) const noexcept
{
    const std::size_t size = answer_run_size(anchor_count, entries);
    _ack.write(out, dst_ip, entropy, static_cast<std::uint16_t>(size - ether_size));
    std::uint8_t* laps = out + outer_off::laps;
    laps[laps_off::version_type] =
        static_cast<std::uint8_t>((laps_version << 4) | static_cast<std::uint8_t>(packet_type::ack_run));
    write_run_header(laps + laps_size(anchor_count), entries, ecn_echo_bits);
    return size;
}

credit_route credit_route_of(const parsed_packet& data) noexcept
{
    const laps_header& h = data.header;
    credit_route r;
    r.dst_ip = data.src_ip;
    r.entropy = data.entropy();
    r.pid = h.pid;
    r.anchor_count = static_cast<std::uint8_t>(std::min<std::size_t>(h.anchor_count, max_anchors));
    for (std::size_t i = 0; i < r.anchor_count; ++i) {
        r.anchors[i] = h.anchors[r.anchor_count - 1 - i]; // the reversed path, as the ACK's
    }
    r.flow_id = h.flow_id;
    r.epoch = h.epoch;
    return r;
}

std::size_t header_writer::credit(std::uint8_t* out, const credit_route& route, std::uint32_t granted) const noexcept
{
    const std::size_t n = route.anchor_count;
    const std::size_t size = credit_size(n);
    _credit.write(out, route.dst_ip, route.entropy, static_cast<std::uint16_t>(size - ether_size));
    std::uint8_t* laps = out + outer_off::laps;
    write_laps_fixed(laps, packet_type::credit, _flags, static_cast<std::uint8_t>(n), 0, route.pid, 0, route.flow_id,
                     granted, 0, 0, route.epoch);
    for (std::size_t i = 0; i < n; ++i) {
        store_be32(laps + laps_off::anchors + anchor_size * i, route.anchors[i]);
    }
    return size;
}

void header_writer::write_answer(std::uint8_t* out, const parsed_packet& received, common::time_ns now,
                                 packet_type type, std::size_t size) const noexcept
{
    const laps_header& r = received.header;
    const std::size_t n = std::min<std::size_t>(r.anchor_count, max_anchors);
    (type == packet_type::probe_ack ? _probe_ack : _ack)
        .write(out, received.src_ip, received.entropy(), static_cast<std::uint16_t>(size - ether_size));
    std::uint8_t* laps = out + outer_off::laps;
    write_laps_fixed(laps, type, static_cast<std::uint8_t>((received.ce_marked() ? flag_ecn_echo : 0) | _flags),
                     static_cast<std::uint8_t>(n), 0, r.pid,
                     latency_to_time48(latency_since(r.time, now)), r.flow_id, r.seq,
                     static_cast<std::uint16_t>(r.time),
                     static_cast<std::uint16_t>(std::min<std::uint32_t>(received.frame_length, 0xFFFF)), r.epoch);
    // The reversed path: the anchors in the opposite order.
    for (std::size_t i = 0; i < n; ++i) {
        store_be32(laps + laps_off::anchors + anchor_size * i, r.anchors[n - 1 - i]);
    }
}

} // namespace laps::wire
