// The receive path: DATA is ACKed on its reversed path and delivered once
// (optionally in order); ACKs feed the PIT, AIMD and loss detection; probes
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
        case wire::packet_type::probe:
            on_probe(r.packet, now);
            break;
        case wire::packet_type::probe_ack:
            on_probe_ack(r.packet, now);
            break;
        }
        consumed.add(m);
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

    // ACK every copy, the duplicate too (§II-F), on the reversed path.
    rte_mbuf* ack = wire::build_answer(_config.control_pool, _headers, p, now);
    if (ack != nullptr) {
        sign(ack, std::min<std::size_t>(p.header.anchor_count, wire::max_anchors));
        ++_counters.ack_sent;
        stage_to_fabric(ack);
    } else {
        ++_counters.ack_drop_no_mbuf;
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

bool engine::record_sample(const wire::laps_header& h, time_ns now, time_ns rtt_ns,
                           std::uint32_t answer_bytes) noexcept
{
    std::uint8_t events = 0;
    // The estimator sees every sample that belongs (a clock step shows as
    // implausible latencies until it is confirmed); realVal only plausible ones.
    time_ns recorded = 0;
    const std::uint32_t set = _table.record_latency(
        h.pid, tables::path_table::latency_sample{h.latency_ns(), h.acked_bytes, rtt_ns, answer_bytes}, now, &events,
        _config.max_latency_ns, &recorded);
    if (recorded != 0) {
        auto& stats = _path_stats[h.pid];
        ++stats.latency_samples;
        stats.latency_min_ns = std::min(stats.latency_min_ns, recorded);
    }
    if (events != 0) { // rare: the estimator did something worth counting
        _counters.clock_offset_raised += (events & tables::offset_raised) != 0;
        _counters.clock_offset_seeded += (events & tables::offset_seeded) != 0;
        _counters.clock_step_back += (events & tables::offset_step_back) != 0;
        _counters.clock_step_forward += (events & tables::offset_step_forward) != 0;
        _counters.clock_offset_expired += (events & tables::offset_expired) != 0;
        _counters.clock_skew_updates += (events & tables::offset_skew_updated) != 0;
    }
    if (set != tables::no_set && (events & tables::offset_implausible) != 0) {
        ++_counters.ack_drop_implausible_latency;
        return false;
    }
    return set != tables::no_set;
}

void engine::on_ack(const wire::parsed_packet& p, time_ns now) noexcept
{
    ++_counters.ack_rx;
    const wire::laps_header& h = p.header;
    // Nothing changes unless the ACK answers a DATA packet this engine sent:
    // its incarnation, a live flow of ours, a path of that flow's set, a
    // sequence number in flight on that path (docs/pipeline.md "Receiver
    // guarantees": what a forged packet can and cannot change).
    if (!_table.contains(h.pid) || _table.path(h.pid).set_index() == tables::no_set) {
        ++_counters.ack_drop_unknown_pid;
        return;
    }
    if (h.epoch != _config.epoch) {
        ++_counters.ack_drop_stale_epoch;
        return;
    }
    const std::uint32_t index = h.flow_id & flow_index_mask;
    if (index >= _flows.size() || !_flows[index].active || !_flow_ids.matches(h.flow_id, _flows[index].generation)) {
        ++_counters.ack_drop_unknown_flow;
        return;
    }
    auto& f = _flows[index];
    const tables::path_entry& path = _table.path(h.pid);
    if (f.set != path.set_index()) {
        ++_counters.ack_drop_wrong_destination;
        return;
    }

    // Alg. 3: the window says whether this packet was sent on this path.
    // Only an ACK that answers a transmission it records goes further: a
    // duplicate (forged, or a late copy) moves no timer, sample or rate.
    const std::uint8_t slot = path.slot;
    const retransmit::ack_outcome out = f.window.on_ack(h.seq, slot);
    switch (out.result) {
    case retransmit::ack_result::released:
        f.silent_timeouts = 0;
        break;
    case retransmit::ack_result::released_late:
        f.silent_timeouts = 0;
        ++_counters.loss_spurious;
        break;
    case retransmit::ack_result::resend_answered:
        break;
    case retransmit::ack_result::duplicate:
        ++_counters.ack_duplicate;
        return;
    case retransmit::ack_result::unknown:
        ++_counters.ack_unknown_seq;
        return;
    case retransmit::ack_result::wrong_path:
        ++_counters.ack_wrong_path;
        return;
    }
    // A round trip when the ACK answers the transmission the window
    // remembers (docs/pipeline.md "Clock offset"). time_echo is the time
    // the packet left: the shell may have restamped it up to
    // departure_slack_ns after the engine built it (app/run/worker.cpp). A
    // resent packet's ACK may answer an earlier transmission (Karn): it
    // counts only on an exact match. 32 bits of ns hold 4 s.
    const auto later = static_cast<std::uint16_t>(h.time_echo - static_cast<std::uint16_t>(out.sent_lo32));
    const bool timed = out.has_send_time && (later == 0 || (!out.was_resent && later <= departure_slack_ns));
    const time_ns rtt_ns = timed ? static_cast<time_ns>(static_cast<std::uint32_t>(now) - out.sent_lo32 - later) : -1;
    if (rtt_ns > 0) {
        // The ACK answers the transmission the window timed (time_echo
        // matches, Karn's ambiguity resolved as by RFC 7323's timestamps):
        // the timeout was long enough for it, and the estimate has a sample.
        // The flow's timeouts start from the estimate again.
        _round_trips[h.pid].on_rtt(rtt_ns);
        f.backoff = 0;
    }
    if (out.has_handle) {
        ++_counters.data_acked;
        _released_frames.add(reinterpret_cast<rte_mbuf*>(out.handle));
    }
    _counters.loss_by_gap += out.newly_lost;
    _path_stats[h.pid].losses += out.newly_lost;
    f.last_active = now;
    // Each ACK restarts the path's 2 x realVal timer (§III-G).
    arm_path_timer(index, slot, now);
    make_ready(index);
    if (_other_policy) {
        policy_on_ack(f, slot, (h.flags & wire::flag_ecn_echo) != 0, rtt_ns, now);
    }

    // Alg. 2 lines 1-2: the measurement is the path's, whatever the flow.
    if (!record_sample(h, now, rtt_ns, p.frame_length)) {
        return;
    }
    if (_other_policy) {
        policy_on_sample(f, slot, now);
    }
    // Alg. 2 lines 3-15.
    const std::uint32_t set = f.set;
    const congestion::aimd_params& cc = _config.algo.congestion.aimd;
    congestion::aimd_action action = congestion::aimd_action::none;
    if (coupled_paths()) [[unlikely]] {
        action = coupled_on_ack(index, h.pid, now);
    } else if (cc.variant == congestion::cc_variant::paper) {
        action = f.rate.on_ack(cc, now, _table.max_base_valid(set),
                               _table.min_real_valid(set, now, !_selector.probes(), _minimums[set]));
    } else if (const time_ns queue = _table.min_queue_fresh(set, now); queue != tables::path_table::no_queue) {
        // Every fresh path queued above the target: the flow cuts its rate.
        // One path queued while another is not: the selection moves the
        // traffic (Eq. 1), the rate stays (docs/congestion.md).
        action = f.rate.on_ack_fair(cc, now, _table.min_real_valid(set, now, true, _minimums[set]), queue);
    }
    switch (action) {
    case congestion::aimd_action::decrease:
        ++_counters.aimd_decrease;
        break;
    case congestion::aimd_action::increase:
        ++_counters.aimd_increase;
        break;
    case congestion::aimd_action::hyper_increase:
        ++_counters.aimd_hyper_increase;
        break;
    case congestion::aimd_action::none:
        break;
    }
}

void engine::on_probe(const wire::parsed_packet& p, time_ns now) noexcept
{
    ++_counters.probe_rx;
    rte_mbuf* answer = wire::build_answer(_config.control_pool, _headers, p, now);
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
    record_sample(h, now);
}

} // namespace laps::pipeline
