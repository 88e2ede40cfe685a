// The fabric's packets into the engine: parsed, authenticated, and handed
// to the side they are for: DATA and PROBE to the receive side
// (receive_side.cpp), ACK, ACK_RUN, PROBE_ACK and CREDIT to the send side's
// answer path (ack_path.cpp).
#include "pipeline/engine.hpp"
#include "wire/mbuf_parse.hpp"

namespace laps::pipeline {

void engine::from_fabric(rte_mbuf* const* packets, std::uint16_t count, time_ns now) noexcept
{
    // Control packets once read, in one bulk free per burst (their pool is
    // the fabric port's; the frames ACKs release are the send side's).
    free_batch consumed;
    for (std::uint16_t i = 0; i < count; ++i) {
        rte_mbuf* m = packets[i];
        ++_counters.fabric_rx;
        union parsed {
            parsed() noexcept {} // no zeroing: parse() writes what it returns ok for
            wire::parsed_packet packet;
        } r;
        const wire::parse_error error = wire::parse(m, _config.outer.udp_port, _table.paths().capacity(), r.packet);
        if (error != wire::parse_error::ok) {
            if (wire::is_foreign(error)) {
                ++_counters.fabric_passthrough_foreign;
                stage_to_host(m);
            } else {
                ++_parse_errors[static_cast<std::size_t>(error)];
                ++_counters.fabric_drop_malformed;
                rte_pktmbuf_free(m);
            }
            continue;
        }
        if (_auth && !authentic(m, r.packet, now)) [[unlikely]] {
            rte_pktmbuf_free(m);
            continue;
        }
        // Steering check (several workers): a table load, no division.
        // Processed anyway.
        if (_config.workers > 1 && _worker_of_tag[r.packet.src_port & 0xFFu] != _config.worker) {
            ++_counters.fabric_rx_wrong_worker;
        }
        if (r.packet.header.type != wire::packet_type::data) {
            _receiver.charge_port(m, r.packet.frame_length);
        }
        switch (r.packet.header.type) {
        case wire::packet_type::data:
            _receiver.on_data(m, r.packet, now);
            continue; // on_data owns m
        case wire::packet_type::ack:
            _sender.on_ack(r.packet, now);
            break;
        case wire::packet_type::ack_run:
            _sender.on_ack_run(m, r.packet, now);
            break;
        case wire::packet_type::probe:
            _receiver.on_probe(m, r.packet, now);
            break;
        case wire::packet_type::probe_ack:
            _sender.on_probe_ack(r.packet, now);
            break;
        case wire::packet_type::credit:
            _sender.on_credit(r.packet);
            break;
        }
        consumed.add(m);
    }
    _receiver.end_burst(now);
    consumed.flush();
    // ACKs may have opened windows or found losses: send now.
    _sender.end_burst(now);
}

} // namespace laps::pipeline
