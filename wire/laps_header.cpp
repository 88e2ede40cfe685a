#include "wire/laps_header.hpp"

#include "wire/bytes.hpp"

namespace laps::wire {

std::string_view to_string(packet_type t) noexcept
{
    switch (t) {
    case packet_type::data:
        return "data";
    case packet_type::ack:
        return "ack";
    case packet_type::probe:
        return "probe";
    case packet_type::probe_ack:
        return "probe_ack";
    case packet_type::ack_run:
        return "ack_run";
    case packet_type::credit:
        return "credit";
    }
    return "unknown";
}

laps_header make_data_header(tables::path_id pid, common::time_ns now, std::uint32_t flow_id,
                             std::uint32_t seq, std::span<const std::uint32_t> anchors,
                             bool retransmit, std::uint32_t epoch) noexcept
{
    laps_header h;
    h.type = packet_type::data;
    h.flags = retransmit ? flag_retransmit : 0;
    h.pid = pid;
    h.time = to_time48(now);
    h.flow_id = flow_id;
    h.seq = seq;
    h.epoch = epoch;
    h.set_anchors(anchors.size() <= max_anchors ? anchors : anchors.first(max_anchors));
    return h;
}

laps_header make_probe_header(tables::path_id pid, common::time_ns now, std::uint32_t probe_seq,
                              std::span<const std::uint32_t> anchors, std::uint32_t epoch) noexcept
{
    laps_header h = make_data_header(pid, now, 0, probe_seq, anchors, false, epoch);
    h.type = packet_type::probe;
    return h;
}

void write_laps_header(std::uint8_t* out, const laps_header& h) noexcept
{
    write_laps_fixed(out, h.type, h.flags, h.anchor_count, h.anchor_index, h.pid, h.time, h.flow_id, h.seq,
                     is_ack(h.type) ? h.time_echo : h.inner_length,
                     h.type == packet_type::data ? h.window_offset
                     : is_ack(h.type)            ? h.acked_bytes
                                                 : 0,
                     h.epoch);
    for (std::size_t i = 0; i < h.anchor_count; ++i) {
        store_be32(out + laps_off::anchors + anchor_size * i, h.anchors[i]);
    }
}

void read_laps_header(const std::uint8_t* in, laps_header& h) noexcept
{
    h.type = static_cast<packet_type>(in[laps_off::version_type] & 0x0F);
    h.flags = in[laps_off::flags] & known_flags; // unknown bits are ignored
    h.anchor_count = in[laps_off::anchor_count];
    h.anchor_index = in[laps_off::anchor_index];
    h.pid = load_be16(in + laps_off::pid);
    h.time = load_be48(in + laps_off::time);
    h.flow_id = load_be32(in + laps_off::flow_id);
    h.seq = load_be32(in + laps_off::seq);
    const std::uint16_t at20 = load_be16(in + laps_off::inner_length);
    h.inner_length = is_ack(h.type) ? 0 : at20;
    h.time_echo = is_ack(h.type) ? at20 : 0;
    const std::uint16_t at22 = load_be16(in + laps_off::window_offset);
    h.window_offset = h.type == packet_type::data ? at22 : 0;
    h.acked_bytes = is_ack(h.type) ? at22 : 0;
    h.epoch = load_be32(in + laps_off::epoch);
    h.anchors = {};
    const std::size_t n = h.anchor_count <= max_anchors ? h.anchor_count : max_anchors;
    for (std::size_t i = 0; i < n; ++i) {
        h.anchors[i] = load_be32(in + laps_off::anchors + anchor_size * i);
    }
    h.run_entries = h.type == packet_type::ack_run ? in[laps_size(n) + run_off::count] : 0;
}

} // namespace laps::wire
