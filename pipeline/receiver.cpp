// The receive path: DATA is ACKed on its reversed path and delivered once
// (optionally in order); ACKs go to the sender's side (ack_path.cpp); probes
// are answered and their answers measured.
#include "pipeline/engine.hpp"
#include "wire/key_hash.hpp"
#include "wire/mbuf_build.hpp"
#include "wire/mbuf_parse.hpp"

#include <rte_hash.h>

#include <algorithm>
#include <limits>

namespace laps::pipeline {

void engine::from_fabric(rte_mbuf* const* packets, std::uint16_t count, time_ns now) noexcept
{
    // Control packets once read, in one bulk free per burst (their pool is
    // the fabric port's; the frames ACKs release go to _released_frames).
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
        if (_config.workers > 1 && _worker_of_tag[r.packet.src_port & _tag_mask] != _config.worker) {
            ++_counters.fabric_rx_wrong_worker;
        }
        switch (r.packet.header.type) {
        case wire::packet_type::data:
            on_data(m, r.packet, now);
            continue; // on_data owns m
        case wire::packet_type::ack:
            on_ack(r.packet, now);
            break;
        case wire::packet_type::ack_run:
            on_ack_run(m, r.packet, now);
            break;
        case wire::packet_type::probe:
            on_probe(m, r.packet, now);
            break;
        case wire::packet_type::probe_ack:
            on_probe_ack(r.packet, now);
            break;
        }
        consumed.add(m);
    }
    if (_open_runs != 0) {
        send_answers();
    }
    consumed.flush();
    _released_frames.flush();
    // ACKs may have opened windows or found losses: send now.
    transmit(now, _config.poll_budget);
}

receive_flow* engine::receive_flow_for(const wire::parsed_packet& p, time_ns now, bool& bad_offset) noexcept
{
    receive_key key{p.src_ip, p.header.flow_id, p.header.epoch, _receive_tag};
    // A receive burst holds runs of one flow's DATA (elephants, RDMA QPs):
    // the previous DATA's flow is tried first, by its key kept here
    // (forget_receive_flow drops it with its flow). A copy, not
    // _receive_keys[_last_receive_slot]: a miss then reads no line of the
    // flow tables (+9 instructions per DATA on interleaved flows against
    // +23 with the table's key, docs/PERFORMANCE.md §13).
    if (flow_cache::same_key(_last_receive_key, key) && _last_receive_slot != no_receive_slot) {
        auto& r = _receive_flows[_last_receive_slot];
        r.last_active = now;
        return &r;
    }
    const std::uint32_t hash = wire::key_hash(key); // the table's own hash, without its indirect call
    std::int32_t position = _receive_slots.find(&key, hash);
    if (position < 0) {
        // What sizes the new flow's state is checked before any exists: a
        // sender never has more than its window unacknowledged, so an
        // offset beyond the duplicate window is not one of its packets.
        if (p.header.window_offset >= _receive_window) {
            bad_offset = true;
            return nullptr;
        }
        position = _receive_slots.add(&key, hash);
        if (position < 0 && reclaim_receive_flow(now)) {
            position = _receive_slots.add(&key, hash);
        }
        if (position < 0) {
            return nullptr;
        }
        auto& r = _receive_flows[static_cast<std::uint32_t>(position)];
        r.active = true;
        // Everything before seq - window_offset was acknowledged to the
        // sender: the flow starts there, whether it is new (offset = seq) or
        // one this receiver forgot after a long silence.
        const std::uint32_t start = p.header.seq - p.header.window_offset;
        r.dups.reset(start);
        r.reorder.reset(start);
        _receive_keys[static_cast<std::uint32_t>(position)] = key;
        ++_active_receive_flows;
        ++_counters.receiver_flow_created;
    }
    _last_receive_slot = static_cast<std::uint32_t>(position);
    _last_receive_key = key;
    auto& r = _receive_flows[_last_receive_slot];
    r.last_active = now;
    return &r;
}

void engine::skip_acknowledged_gap(std::uint32_t index, std::uint32_t acked_before, time_ns now) noexcept
{
    // The sender never sends again what is before its lowest unacknowledged
    // sequence number (seq - window_offset): a gap there was ACKed by an
    // earlier run of this receiver, or by this one before it forgot the
    // flow, and cannot fill. Waiting on it would hold the flow's frames for
    // the reorder timeout and, once the sender is a window ahead, refuse
    // every packet as beyond the window, unACKed: the flow would stall.
    auto& r = _receive_flows[index];
    if (!r.dups.advance_to(acked_before)) [[likely]] {
        return;
    }
    ++_counters.receiver_gap_acknowledged;
    if (!_config.in_order) {
        return;
    }
    r.reorder.skip_to(acked_before, [this](std::uint64_t h) { deliver_held(h); });
    release_in_order(index, now);
}

void engine::deliver_held(std::uint64_t handle) noexcept
{
    --_reorder_held;
    deliver(reinterpret_cast<rte_mbuf*>(handle));
}

void engine::deliver(rte_mbuf* frame) noexcept
{
    ++_counters.data_delivered;
    _counters.data_bytes_delivered += frame->pkt_len;
    stage_to_host(frame);
}

void engine::on_data(rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept
{
    ++_counters.data_rx;
    bool bad_offset = false;
    receive_flow* r = receive_flow_for(p, now, bad_offset);
    if (r == nullptr) {
        ++(bad_offset ? _counters.data_drop_bad_window_offset : _counters.data_drop_flow_table_full);
        rte_pktmbuf_free(m);
        return;
    }
    const auto index = static_cast<std::uint32_t>(r - _receive_flows.data());
    const std::uint32_t seq = p.header.seq;
    if (p.header.window_offset < _receive_window) {
        skip_acknowledged_gap(index, seq - p.header.window_offset, now);
    }
    const retransmit::receive_verdict verdict = r->dups.on_receive(seq);
    if (verdict == retransmit::receive_verdict::beyond_window) {
        // Not ACKed: the sender resends it once the window has moved.
        ++_counters.data_drop_beyond_window;
        rte_pktmbuf_free(m);
        return;
    }

    // ACK every copy, the duplicate too (§II-F), on the reversed path:
    // now, or coalesced with the burst's other DATA of its flow and path.
    const time_ns arrived = _rx_time ? _rx_time->of(m, now) : now;
    if (_runs) {
        answer_in_run(p, index, arrived);
    } else {
        rte_mbuf* ack = wire::build_answer(_config.control_pool, _headers, p, arrived);
        if (ack != nullptr) {
            sign(ack, std::min<std::size_t>(p.header.anchor_count, wire::max_anchors));
            ++_counters.ack_sent;
            stage_to_fabric(ack);
        } else {
            ++_counters.ack_drop_no_mbuf;
        }
    }
    if (verdict == retransmit::receive_verdict::duplicate) {
        ++_counters.data_drop_duplicate;
        rte_pktmbuf_free(m);
        return;
    }

    rte_mbuf* frame = wire::decapsulate(m, p);
    if (frame == nullptr) {
        ++_counters.data_drop_decap;
        rte_pktmbuf_free(m);
        return;
    }
    if (!_config.in_order) {
        deliver(frame);
        return;
    }
    if (r->reorder.behind(seq)) {
        // Its gap was given up on (reorder timeout): late, but not lost.
        ++_counters.data_delivered_late;
        deliver(frame);
        return;
    }
    // The dup filter let only a first copy within the window through, so the
    // insert cannot fail; count defensively anyway.
    if (!r->reorder.insert(seq, reinterpret_cast<std::uint64_t>(frame))) {
        ++_counters.data_drop_beyond_window;
        rte_pktmbuf_free(frame);
        return;
    }
    ++_reorder_held;
    const std::uint32_t held = r->reorder.held();
    _counters.reorder_held_max = std::max<std::uint64_t>(_counters.reorder_held_max, held);
    ++_reorder_histogram[std::min<std::size_t>(held - 1, reorder_histogram_size - 1)];
    release_in_order(index, now);
    if (_reorder_held > _config.reorder_hold_max) {
        // Holding for order may not take the pool: the flow that has waited
        // longest stops waiting, not the newest, so flows with one stuck
        // packet (forged, or a sender gone) cannot keep the room from flows
        // whose gaps a resend is about to fill.
        give_up_oldest_gap();
    }
}

std::int64_t engine::pop_waiting_flow(time_ns until) noexcept
{
    // The reorder timers are due at held_since + timeout, one entry per
    // waiting flow, so the top is the longest wait, once entries made stale
    // by a filled gap (a newer one started later) are put back at their real
    // due time, and entries of flows that hold nothing are dropped.
    while (!_reorder_timers.empty() && _reorder_timers.top().at <= until) {
        const timer_entry e = _reorder_timers.top();
        _reorder_timers.pop();
        auto& r = _receive_flows[e.flow];
        r.reorder_pending = false;
        if (!r.active || r.reorder.held() == 0) {
            continue;
        }
        const time_ns due = r.held_since + _config.reorder_timeout_ns;
        if (due > e.at) {
            r.reorder_pending = true;
            _reorder_timers.push(timer_entry{due, e.flow, 0, timer_kind::retry, 0});
            continue;
        }
        return e.flow;
    }
    return -1;
}

void engine::give_up_oldest_gap() noexcept
{
    if (const std::int64_t index = pop_waiting_flow(std::numeric_limits<time_ns>::max()); index >= 0) {
        ++_counters.reorder_hold_limit;
        give_up_gap(static_cast<std::uint32_t>(index), false);
    }
}

void engine::release_in_order(std::uint32_t index, time_ns now) noexcept
{
    auto& r = _receive_flows[index];
    const std::uint32_t was_held = r.reorder.held();
    const std::uint32_t released = r.reorder.release([this](std::uint64_t h) { deliver_held(h); });
    if (r.reorder.held() == 0) {
        return;
    }
    // A (new) gap: the timeout counts from when the flow started waiting.
    if (released > 0 || was_held == 1) {
        r.held_since = now;
    }
    if (!r.reorder_pending) {
        r.reorder_pending = true;
        _reorder_timers.push(timer_entry{r.held_since + _config.reorder_timeout_ns, index, 0, timer_kind::retry, 0});
    }
}

void engine::give_up_gap(std::uint32_t index, bool by_timeout) noexcept
{
    auto& r = _receive_flows[index];
    if (r.reorder.held() == 0) {
        return;
    }
    const bool drop = by_timeout && _config.reorder_timeout_action == reorder_gap_action::drop;
    r.reorder.skip_gaps([this, drop](std::uint64_t h) {
        --_reorder_held;
        auto* frame = reinterpret_cast<rte_mbuf*>(h);
        if (drop) {
            ++_counters.reorder_drop_timeout;
            rte_pktmbuf_free(frame);
        } else {
            deliver(frame);
        }
    });
}

void engine::run_reorder_timers(time_ns now) noexcept
{
    for (std::int64_t index; (index = pop_waiting_flow(now)) >= 0;) {
        ++_counters.reorder_timeout;
        give_up_gap(static_cast<std::uint32_t>(index), true);
    }
}

void engine::on_probe(const rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept
{
    ++_counters.probe_rx;
    rte_mbuf* answer = wire::build_answer(_config.control_pool, _headers, p, _rx_time ? _rx_time->of(m, now) : now);
    if (answer == nullptr) {
        ++_counters.probe_ack_drop_no_mbuf;
        return;
    }
    sign(answer, std::min<std::size_t>(p.header.anchor_count, wire::max_anchors));
    stage_to_fabric(answer);
}

void engine::on_probe_ack(const wire::parsed_packet& p, time_ns now) noexcept
{
    ++_counters.probe_ack_rx;
    const wire::laps_header& h = p.header;
    if (!_table.contains(h.pid) || _table.path(h.pid).set_index() == tables::no_set) {
        ++_counters.probe_ack_drop_unknown_pid;
        return;
    }
    // Only the answer to the probe outstanding on this path, from this
    // incarnation, while probing: anything else changes nothing.
    if (h.epoch != _config.epoch || !_selector.takes_probe_answers() || h.seq == 0 ||
        _probe_outstanding[h.pid] != h.seq) {
        ++_counters.probe_ack_drop_unexpected;
        return;
    }
    _probe_outstanding[h.pid] = 0;
    record_sample(h.pid, h.latency_ns(), h.acked_bytes, now);
}

} // namespace laps::pipeline
