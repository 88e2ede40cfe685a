// A coalescing receiver (engine_config acks, docs/wire-format.md "ACK_RUN"):
// the answers to one receive burst's DATA, grouped per (flow, path) in
// arrival order, leave at the burst's end as one ACK_RUN per group (the
// plain ACK for a group of one). Grouping per path keeps Alg. 3's order: a
// path's answers travel its reversed route, as its ACKs would, and each
// ACK_RUN lists them in the order their DATA came.
//
// A run is built in place: its first DATA's ACK is written into a control
// mbuf as a per-packet receiver would write it, each DATA that joins adds a
// 12-byte entry after the anchors, and finish_run() turns the packet into an
// ACK_RUN (type, lengths, checksum, block header) once. A run of one costs
// what a per-packet ACK costs; every further DATA costs its entry.
#include "pipeline/receive_side.hpp"
#include "wire/bytes.hpp"
#include "wire/mbuf_build.hpp"

#include <algorithm>

namespace laps::pipeline {

void receive_side::answer_in_run(const wire::parsed_packet& p, std::uint32_t flow, time_ns now) noexcept
{
    auto& runs = *_runs;
    std::uint8_t& slot = _run_index[run_index_of(flow, p.header.pid)];
    // A receive flow slot is one (sender, flow, epoch) for the whole burst:
    // forget_flow takes a forgotten flow's slot out of its run.
    if (slot != 0) {
        answer_run& run = runs[slot - 1u];
        if (run.flow == flow && run.pid == p.header.pid) {
            std::uint8_t* header = rte_pktmbuf_mtod(run.m, std::uint8_t*) + wire::outer_off::laps;
            if (run.count == 0) {
                // A second DATA: the run's latency base (what the ACK it
                // holds reports) and room.
                run.base_latency = wire::sign_extend48(wire::load_be48(header + wire::laps_off::time));
                const std::uint16_t room = rte_pktmbuf_tailroom(run.m);
                run.limit = room > wire::run_header_size
                                ? std::min<std::uint32_t>((room - wire::run_header_size) / wire::run_entry_size,
                                                          wire::max_run_entries)
                                : 0;
            }
            wire::run_entry entry;
            if (run.count < run.limit && wire::run_entry_for(p, now, run.base_latency, entry)) {
                wire::write_run_entry(header + wire::laps_size(run.anchors), run.count, entry);
                run.ecn_echo_bits |= static_cast<std::uint32_t>(p.ce_marked()) << run.count;
                ++run.count;
                return;
            }
            // Full, or too far apart in latency: the run goes now, and this
            // DATA opens the next (sent after it: the order holds).
            finish_run(run);
            if (!open_run(run, p, flow, now)) {
                slot = 0;
            }
            return;
        }
    }
    if (_open_runs == max_open_runs) {
        send_answers();
    }
    if (open_run(runs[_open_runs], p, flow, now)) {
        slot = static_cast<std::uint8_t>(++_open_runs);
    }
}

bool receive_side::open_run(answer_run& run, const wire::parsed_packet& p, std::uint32_t flow, time_ns now) noexcept
{
    // The first DATA's ACK, as a per-packet receiver writes it.
    run.m = wire::build_answer(_config.control_pool, _headers, p, now);
    if (run.m == nullptr) {
        ++_counters.ack_drop_no_mbuf;
        return false;
    }
    run.flow = flow;
    run.pid = p.header.pid;
    run.anchors = static_cast<std::uint8_t>(std::min<std::size_t>(p.header.anchor_count, wire::max_anchors));
    run.count = 0;
    run.ecn_echo_bits = 0;
    return true;
}

void receive_side::send_answers() noexcept
{
    auto& runs = *_runs;
    for (std::uint32_t i = 0; i < _open_runs; ++i) {
        if (runs[i].m != nullptr) { // null: its reopening found no mbuf (counted)
            finish_run(runs[i]);
        }
    }
    _open_runs = 0;
    _run_index.fill(0);
}

void receive_side::finish_run(answer_run& run) noexcept
{
    std::size_t laps_bytes = wire::laps_size(run.anchors);
    if (run.count != 0) {
        const auto block = static_cast<std::uint16_t>(wire::run_block_size(run.count));
        rte_pktmbuf_append(run.m, block); // the room was checked when the run opened
        // The ACK already holds the destination and entropy (its own headers).
        auto* out = rte_pktmbuf_mtod(run.m, std::uint8_t*);
        _headers.finish_run(out, wire::load_be32(out + wire::outer_off::ip_dst),
                            wire::load_be16(out + wire::outer_off::udp_src_port), run.anchors, run.count,
                            run.ecn_echo_bits);
        laps_bytes += block;
        ++_counters.ack_coalesced_sent;
    }
    sign_laps(run.m, laps_bytes);
    _counters.ack_sent += 1 + run.count;
    stage_to_fabric(run.m);
    run.m = nullptr;
}

} // namespace laps::pipeline
