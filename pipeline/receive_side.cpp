// The receive side (pipeline/receive_side.hpp): DATA is ACKed on its
// reversed path and delivered once (optionally in order); probes are
// answered. The engine's from_fabric() hands it what it accepted.
#include "pipeline/receive_side.hpp"
#include "pipeline/flow_cache.hpp"
#include "wire/key_hash.hpp"
#include "wire/mbuf_build.hpp"
#include "wire/mbuf_encap.hpp"

#include <algorithm>
#include <limits>

namespace laps::pipeline {

std::uint32_t receive_side::capacity_for(const engine_config& config) noexcept
{
    return config.receive_flow_capacity != 0 ? config.receive_flow_capacity : config.algo.tables.flow_capacity;
}

receive_side::receive_side(const engine_parts& parts, flow_slots slots, std::pmr::memory_resource* memory)
    : _config(parts.config), _counters(parts.counters), _to_host(parts.to_host), _to_fabric(parts.to_fabric),
      _signer(parts.signer), _tag(parts.config.flow_index_tag), _flows(memory),
      _reorder_timers(parts.config.in_order ? capacity_for(parts.config) : 0, memory),
      _headers(parts.config.outer, parts.config.auth_key.has_value()), _keys(memory), _slots(std::move(slots))
{
    const std::uint32_t capacity = capacity_for(_config);
    _flows.reserve(capacity);
    for (std::uint32_t i = 0; i < capacity; ++i) {
        _flows.emplace_back(_config.algo.retransmit.window_packets, _config.in_order, memory);
    }
    _keys.assign(capacity, receive_key{});
    const auto& credit = _config.algo.congestion.aimd.credit;
    _credit_ports = std::clamp<std::uint32_t>(credit.ports, 1, congestion::max_credit_ports);
    for (std::uint32_t port = 0; port < _credit_ports; ++port) {
        _credit_pacers[port].queue = std::pmr::vector<credit_turn>(memory);
        _credit_pacers[port].queue.reserve(capacity); // a flow is in it once at most
    }
    const double downlink_bps = credit.downlink_bps > 0 ? credit.downlink_bps : _config.algo.congestion.aimd.cap_bps;
    _credit_ns_per_byte = downlink_bps > 0 ? 8e9 * _credit_ports / (downlink_bps * credit.rate_fraction) : 0.0;
    _charge_other_arrivals = !credit.lossless_fabric.value_or(false);
    _window = _flows.empty() ? 0 : _flows.front().dups.window();
    if (_config.acks == ack_mode::coalesced) {
        _runs = std::make_unique<std::array<answer_run, max_open_runs>>();
    }
    if (_config.rx_timestamps) {
        _rx_time.emplace();
    }
}

void receive_side::poll(time_ns now) noexcept
{
    run_reorder_timers(now);
    if (_credits_owed != 0) {
        grant_credits(now);
    }
    age_flows(now);
}

void receive_side::release_all() noexcept
{
    std::uint64_t freed = 0;
    for (auto& r : _flows) {
        r.reorder.drain([&freed](std::uint64_t h) {
            ++freed;
            rte_pktmbuf_free(reinterpret_cast<rte_mbuf*>(h));
        });
    }
    _counters.stop_free_held += freed;
    _reorder_held = 0;
}

receive_flow* receive_side::flow_for(const wire::parsed_packet& p, time_ns now, bool& bad_offset) noexcept
{
    receive_key key{p.src_ip, p.header.flow_id, p.header.epoch, _tag};
    // A receive burst holds runs of one flow's DATA (elephants, RDMA QPs):
    // the previous DATA's flow is tried first, by its key kept here
    // (forget_flow drops it with its flow). A copy, not
    // _keys[_last_slot]: a miss then reads no line of the
    // flow tables (+9 instructions per DATA on interleaved flows against
    // +23 with the table's key, docs/PERFORMANCE.md §13).
    if (flow_cache::same_key(_last_key, key) && _last_slot != no_slot) {
        auto& r = _flows[_last_slot];
        r.last_active = now;
        return &r;
    }
    const std::uint32_t hash = wire::key_hash(key); // the table's own hash, without its indirect call
    std::int32_t position = _slots.find(&key, hash);
    if (position < 0) {
        // What sizes the new flow's state is checked before any exists: a
        // sender never has more than its window unacknowledged, so an
        // offset beyond the duplicate window is not one of its packets.
        if (p.header.window_offset >= _window) {
            bad_offset = true;
            return nullptr;
        }
        position = _slots.add(&key, hash);
        if (position < 0 && reclaim_flow(now)) {
            position = _slots.add(&key, hash);
        }
        if (position < 0) {
            return nullptr;
        }
        auto& r = _flows[static_cast<std::uint32_t>(position)];
        r.active = true;
        // Everything before seq - window_offset was acknowledged to the
        // sender: the flow starts there, whether it is new (offset = seq) or
        // one this receiver forgot after a long silence.
        const std::uint32_t start = p.header.seq - p.header.window_offset;
        r.dups.reset(start);
        r.reorder.reset(start);
        r.pulls = 0;
        r.seq_upto = 0;
        r.granted = 0;
        r.credit_start = start;
        r.arrived = 0;
        for (auto& port : r.credit_ports) {
            port.routed = false;
        }
        _keys[static_cast<std::uint32_t>(position)] = key;
        ++_active_flows;
        ++_counters.receiver_flow_created;
    }
    _last_slot = static_cast<std::uint32_t>(position);
    _last_key = key;
    auto& r = _flows[_last_slot];
    r.last_active = now;
    return &r;
}

void receive_side::age_flows(time_ns now) noexcept
{
    if (_active_flows == 0) {
        return;
    }
    sweep(_aging_hand, _flows.size(), aging_slots_per_poll, [&](std::uint32_t index) {
        auto& r = _flows[index];
        // Four times the sender's idle time: the sender forgets a flow first.
        // (A sender flow revived after the receiver forgot it is picked up
        // at its window offset.) A flow with frames held for reordering is
        // waiting for a resend: keep it.
        if (r.active && now - r.last_active > 4 * _config.flow_idle_ns && r.reorder.held() == 0) {
            forget_flow(index);
            ++_counters.receiver_flow_evicted_idle;
        }
    });
}

bool receive_side::reclaim_flow(time_ns now) noexcept
{
    // Under pressure (a table full of forged or finished flows) a flow may go
    // after flow_idle instead of 4 x flow_idle: its sender has forgotten it by
    // then if it was done (the sender's own idle eviction), so nothing it
    // still resends can be delivered twice. A slot at most per new flow, a
    // bounded look: the cost stays flat while the table is full.
    constexpr std::uint32_t look = 32;
    const std::uint32_t victim = longest_quiet(
        _aging_hand, _flows.size(), look, now, _config.flow_idle_ns, [this](std::uint32_t index) {
            const auto& r = _flows[index];
            return r.active ? &r.last_active : nullptr;
        });
    if (victim == no_slot) {
        return false;
    }
    // Frames it held for order go to the host in sequence: their gaps have
    // waited longer than any resend.
    give_up_gap(victim, false);
    forget_flow(victim);
    ++_counters.receiver_flow_evicted_pressure;
    return true;
}

void receive_side::forget_flow(std::uint32_t index) noexcept
{
    _slots.remove(&_keys[index], wire::key_hash(_keys[index]), index);
    _flows[index].active = false;
    if (index == _last_slot) {
        _last_slot = no_slot;
    }
    // A run of its answers still open in this burst stays whole and is sent
    // at the burst's end; no DATA of the flow that takes the slot joins it.
    for (std::uint32_t i = 0; i < _open_runs; ++i) {
        if ((*_runs)[i].flow == index) {
            (*_runs)[i].flow = no_slot;
        }
    }
    --_active_flows;
}

void receive_side::skip_acknowledged_gap(std::uint32_t index, std::uint32_t acked_before, time_ns now) noexcept
{
    // The sender never sends again what is before its lowest unacknowledged
    // sequence number (seq - window_offset): a gap there was ACKed by an
    // earlier run of this receiver, or by this one before it forgot the
    // flow, and cannot fill. Waiting on it would hold the flow's frames for
    // the reorder timeout and, once the sender is a window ahead, refuse
    // every packet as beyond the window, unACKed: the flow would stall.
    auto& r = _flows[index];
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

void receive_side::deliver_held(std::uint64_t handle) noexcept
{
    --_reorder_held;
    deliver(reinterpret_cast<rte_mbuf*>(handle));
}

void receive_side::deliver(rte_mbuf* frame) noexcept
{
    ++_counters.data_delivered;
    _counters.data_bytes_delivered += frame->pkt_len;
    stage_to_host(frame);
}

void receive_side::on_data(rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept
{
    ++_counters.data_rx;
    bool bad_offset = false;
    receive_flow* r = flow_for(p, now, bad_offset);
    if (r == nullptr) {
        ++(bad_offset ? _counters.data_drop_bad_window_offset : _counters.data_drop_flow_table_full);
        rte_pktmbuf_free(m);
        return;
    }
    const auto index = static_cast<std::uint32_t>(r - _flows.data());
    r->arrived += 1 + static_cast<std::uint32_t>(p.header.has_flag(wire::flag_retransmit));
    const std::uint32_t seq = p.header.seq;
    if (p.header.window_offset < _window) {
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
            sign_laps(ack, wire::laps_size(std::min<std::size_t>(p.header.anchor_count, wire::max_anchors)));
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
    if (p.header.has_flag(wire::flag_pull)) [[unlikely]] {
        owe_credit(index, m, p, now);
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

std::int64_t receive_side::pop_waiting_flow(time_ns until) noexcept
{
    // The reorder timers are due at held_since + timeout, one entry per
    // waiting flow, so the top is the longest wait, once entries made stale
    // by a filled gap (a newer one started later) are put back at their real
    // due time, and entries of flows that hold nothing are dropped.
    while (!_reorder_timers.empty() && _reorder_timers.top().at <= until) {
        const timer_entry e = _reorder_timers.top();
        _reorder_timers.pop();
        auto& r = _flows[e.flow];
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

void receive_side::give_up_oldest_gap() noexcept
{
    if (const std::int64_t index = pop_waiting_flow(std::numeric_limits<time_ns>::max()); index >= 0) {
        ++_counters.reorder_hold_limit;
        give_up_gap(static_cast<std::uint32_t>(index), false);
    }
}

void receive_side::release_in_order(std::uint32_t index, time_ns now) noexcept
{
    auto& r = _flows[index];
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

void receive_side::give_up_gap(std::uint32_t index, bool by_timeout) noexcept
{
    auto& r = _flows[index];
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

void receive_side::run_reorder_timers(time_ns now) noexcept
{
    for (std::int64_t index; (index = pop_waiting_flow(now)) >= 0;) {
        ++_counters.reorder_timeout;
        give_up_gap(static_cast<std::uint32_t>(index), true);
    }
}

void receive_side::on_probe(const rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept
{
    ++_counters.probe_rx;
    rte_mbuf* answer = wire::build_answer(_config.control_pool, _headers, p, _rx_time ? _rx_time->of(m, now) : now);
    if (answer == nullptr) {
        ++_counters.probe_ack_drop_no_mbuf;
        return;
    }
    sign_laps(answer, wire::laps_size(std::min<std::size_t>(p.header.anchor_count, wire::max_anchors)));
    stage_to_fabric(answer);
}

} // namespace laps::pipeline
