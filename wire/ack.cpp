#include "wire/ack.hpp"

#include <algorithm>

namespace laps::wire {

laps_header ack_header_for(const laps_header& received, bool ce_marked, common::time_ns now,
                           std::uint32_t received_bytes) noexcept
{
    laps_header h;
    h.type = answer_type(received.type);
    h.flags = ce_marked ? flag_ecn_echo : 0;
    h.pid = received.pid;
    h.time = latency_to_time48(latency_since(received.time, now));
    h.flow_id = received.flow_id;
    h.seq = received.seq;
    h.inner_length = 0;
    h.time_echo = static_cast<std::uint16_t>(received.time);
    h.epoch = received.epoch;
    h.acked_bytes = static_cast<std::uint16_t>(std::min<std::uint32_t>(received_bytes, 0xffff));
    const std::size_t n = received.anchor_list().size();
    h.anchor_count = static_cast<std::uint8_t>(n);
    h.anchor_index = 0;
    for (std::size_t i = 0; i < n; ++i) {
        h.anchors[i] = received.anchors[n - 1 - i];
    }
    return h;
}

packet_spec ack_for(const parsed_packet& received, common::time_ns now) noexcept
{
    packet_spec spec;
    spec.dst_ip = received.src_ip;
    spec.entropy = received.entropy();
    spec.header = ack_header_for(received.header, received.ce_marked(), now, received.frame_length);
    return spec;
}

} // namespace laps::wire
