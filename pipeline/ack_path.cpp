// The sender's side of answers: an ACK (or each answer of an ACK_RUN) feeds
// the window and loss detection (Alg. 3), the PIT's latency (Alg. 2 lines
// 1-2, through the clock offset estimate) and the flow's rate (Alg. 2).
#include "pipeline/send_side.hpp"

#include <algorithm>
#include <array>

namespace laps::pipeline {

bool send_side::record_sample(tables::path_id pid, std::int64_t latency_ns, std::uint16_t acked_bytes, time_ns now,
                           time_ns rtt_ns, std::uint32_t answer_bytes) noexcept
{
    std::uint8_t events = 0;
    // The estimator sees every sample that belongs (a clock step shows as
    // implausible latencies until it is confirmed); realVal only plausible ones.
    time_ns recorded = 0;
    const std::uint32_t set = _table.record_latency(
        pid, tables::path_table::latency_sample{latency_ns, acked_bytes, rtt_ns, answer_bytes}, now, &events,
        _config.max_latency_ns, &recorded);
    if (recorded != 0) {
        auto& stats = _path_stats[pid];
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

inline std::uint32_t send_side::answered_flow(const wire::laps_header& h, std::uint32_t answers) noexcept
{
    // Nothing changes unless the ACK answers a DATA packet this engine sent:
    // its incarnation, a live flow of ours, a path of that flow's set, a
    // sequence number in flight on that path (docs/pipeline.md "Receiver
    // guarantees": what a forged packet can and cannot change).
    if (!_table.contains(h.pid) || _table.path(h.pid).set_index() == tables::no_set) {
        _counters.ack_drop_unknown_pid += answers;
        return no_flow;
    }
    if (h.epoch != _config.epoch) {
        _counters.ack_drop_stale_epoch += answers;
        return no_flow;
    }
    const std::uint32_t index = h.flow_id & flow_index_mask;
    if (index >= _flows.size() || !_flows[index].active || !_flow_ids.matches(h.flow_id, _flows[index].generation)) {
        _counters.ack_drop_unknown_flow += answers;
        return no_flow;
    }
    if (_flows[index].set != _table.path(h.pid).set_index()) {
        _counters.ack_drop_wrong_destination += answers;
        return no_flow;
    }
    return index;
}

template <bool coalesced>
inline void send_side::take_answer(std::uint32_t index, tables::path_id pid, const wire::answer_fields& a,
                                answer_packet& from, time_ns now) noexcept
{
    auto& f = _flows[index];
    const tables::path_entry& path = _table.path(pid);

    // Alg. 3: the window says whether this packet was sent on this path.
    // Only an ACK that answers a transmission it records goes further: a
    // duplicate (forged, or a late copy) moves no timer, sample or rate.
    const std::uint8_t slot = path.slot;
    const retransmit::ack_outcome out = f.window.on_ack(a.seq, slot);
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
    const auto later = static_cast<std::uint16_t>(a.time_echo - static_cast<std::uint16_t>(out.sent_lo32));
    const bool timed = out.has_send_time && (later == 0 || (!out.was_resent && later <= departure_slack_ns));
    const time_ns rtt_ns = timed ? static_cast<time_ns>(static_cast<std::uint32_t>(now) - out.sent_lo32 - later) : -1;
    if (rtt_ns > 0) {
        // The ACK answers the transmission the window timed (time_echo
        // matches, Karn's ambiguity resolved as by RFC 7323's timestamps):
        // the timeout was long enough for it, and the estimate has a sample.
        // The flow's timeouts start from the estimate again. One sample per
        // answer packet: an ACK_RUN's answers shared one trip back, and
        // taking each as a sample of its own would shrink the deviation
        // (RFC 6298's RTTVAR) by 3/4 per answer, and the timeout with it.
        if (!coalesced || !from.round_trip_taken) {
            _round_trips[pid].on_rtt(rtt_ns);
            from.round_trip_taken = true;
        }
        // Both counts (backoff_of reads one): two stores, no branch.
        f.backoff = 0;
        f.path_backoff[slot] = 0;
    }
    if (out.has_handle) {
        ++_counters.data_acked;
        _released_frames.add(reinterpret_cast<rte_mbuf*>(out.handle));
    }
    _counters.loss_by_gap += out.newly_lost;
    _path_stats[pid].losses += out.newly_lost;
    f.last_active = now;
    // Each ACK restarts the path's 2 x realVal timer (§III-G): an ACK
    // here, an ACK_RUN once all its answers are in (on_ack_run).
    if constexpr (coalesced) {
        from.taken = true;
    } else {
        arm_path_timer(index, slot, now);
        make_ready(index);
    }
    if (_other_policy) {
        policy_on_ack(f, slot, a.ecn_echo, rtt_ns, now);
    }

    // Alg. 2 lines 1-2: the measurement is the path's, whatever the flow.
    if (!record_sample(pid, a.latency_ns, a.acked_bytes, now, rtt_ns, from.bytes)) {
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
        action = coupled_on_ack(index, pid, now);
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

void send_side::on_ack(const wire::parsed_packet& p, time_ns now) noexcept
{
    ++_counters.ack_rx;
    const std::uint32_t index = answered_flow(p.header, 1);
    if (index != no_flow) {
        answer_packet from{p.frame_length};
        take_answer<false>(index, p.header.pid, wire::answer_of(p.header), from, now);
    }
}

void send_side::on_ack_run(const rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept
{
    const wire::laps_header& h = p.header;
    const std::uint32_t answers = 1u + h.run_entries;
    ++_counters.ack_coalesced_rx;
    _counters.ack_rx += answers;
    const std::uint32_t index = answered_flow(h, answers);
    if (index == no_flow) {
        return;
    }
    // The run block in one piece: in place when the first segment holds it
    // (always, for packets as LAPS sends them).
    const std::size_t at = p.laps_offset + wire::laps_size(std::min<std::size_t>(h.anchor_count, wire::max_anchors));
    std::array<std::uint8_t, wire::run_block_size(wire::max_run_entries)> copy;
    const auto* block = static_cast<const std::uint8_t*>(
        rte_pktmbuf_read(m, static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(wire::run_block_size(h.run_entries)),
                         copy.data()));
    if (block == nullptr) [[unlikely]] { // parse() checked the length: cannot happen
        _counters.ack_drop_unknown_flow += answers;
        return;
    }
    // The answers in the order the receiver took their DATA, as its ACKs
    // would have come (Alg. 3 sees each path's answers in order).
    const wire::answer_fields first = wire::answer_of(h);
    answer_packet from{p.frame_length};
    for (std::uint32_t i = 0; i <= h.run_entries; ++i) { // one call site: take_answer is inlined
        take_answer<true>(index, h.pid, i == 0 ? first : wire::read_run_entry(block, i - 1, first.latency_ns), from, now);
    }
    if (from.taken) {
        arm_path_timer(index, _table.path(h.pid).slot, now);
        make_ready(index);
    }
}

void send_side::on_probe_ack(const wire::parsed_packet& p, time_ns now) noexcept
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

void send_side::on_credit(const wire::parsed_packet& p) noexcept
{
    ++_counters.credit_rx;
    const wire::laps_header& h = p.header;
    // Validated as an ACK is (answered_flow): a path of ours, this
    // incarnation, a live flow of ours whose set the path belongs to.
    if (!_table.contains(h.pid) || _table.path(h.pid).set_index() == tables::no_set) {
        ++_counters.credit_drop_unknown_pid;
        return;
    }
    if (h.epoch != _config.epoch) {
        ++_counters.credit_drop_stale_epoch;
        return;
    }
    const std::uint32_t index = h.flow_id & flow_index_mask;
    if (index >= _flows.size() || !_flows[index].active || !_flow_ids.matches(h.flow_id, _flows[index].generation) ||
        _flows[index].set != _table.path(h.pid).set_index()) {
        ++_counters.credit_drop_unknown_flow;
        return;
    }
    auto& c = _flows[index].credit;
    // `seq` counts the credits granted so far: a later CREDIT carries every
    // earlier grant, so a lost one costs nothing once the next arrives. A
    // grant beyond what the flow asked for (and the window its first request
    // is granted) is not its receiver's.
    if (static_cast<std::int32_t>(h.seq - c.granted) <= 0) {
        ++_counters.credit_stale;
        return;
    }
    if (static_cast<std::int32_t>(h.seq - (c.pulled + c.window_grants)) > 0) {
        ++_counters.credit_drop_beyond_request;
        return;
    }
    c.granted = h.seq;
    c.waiting_since = -1;
    c.fallback = false;
    c.has_hint = true;
    c.hint = h.pid;
    ++_counters.credit_taken;
    make_ready(index);
}

} // namespace laps::pipeline
