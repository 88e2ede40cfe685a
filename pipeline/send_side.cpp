// The send side's construction, teardown, timers and flow aging
// (pipeline/send_side.hpp). The send path is in sender.cpp, the answers in
// ack_path.cpp, the other seeds' policies in policies.cpp.
#include "pipeline/send_side.hpp"
#include "pipeline/aging.hpp"

#include <algorithm>
#include <bit>
#include <limits>

namespace laps::pipeline {

namespace {

// Timer entries in flight at most: one pace/retry and one timeout per path slot per flow.
std::size_t timer_capacity(std::uint32_t flows)
{
    // Per flow slot at most: a pace or retry entry, a credit wait, one per path.
    return static_cast<std::size_t>(flows) * (2 + tables::max_paths_per_destination);
}

// What a flow held and free_frames() freed.
struct freed_frames {
    std::uint64_t queued = 0;
    std::uint64_t in_flight = 0; // in its window: sent, or lost and waiting for a resend
};

freed_frames free_frames(send_flow& f) noexcept
{
    freed_frames n{f.queue.size(), 0};
    f.queue.free_all();
    f.window.drain([&n](std::uint64_t h) {
        ++n.in_flight;
        rte_pktmbuf_free(reinterpret_cast<rte_mbuf*>(h));
    });
    return n;
}

// ceil(log2(n)): the flow id's worker field.
std::uint8_t bits_for(unsigned n) noexcept
{
    std::uint8_t bits = 0;
    while ((1u << bits) < n) {
        ++bits;
    }
    return bits;
}

} // namespace

send_side::send_side(const engine_parts& parts, flow_slots slots, std::pmr::memory_resource* memory)
    : _config(parts.config), _tables(parts.tables), _table(parts.tables.paths()), _counters(parts.counters),
      _to_fabric(parts.to_fabric), _signer(parts.signer),
      _burst_bytes(parts.config.algo.congestion.pacer_burst_bytes),
      _flow_ids(bits_for(parts.config.workers), parts.config.worker), _port_pacer(_burst_bytes),
      _port_rate(congestion::pace_rate::from_bps(parts.config.port_rate_bps)), _flows(memory), _ready_storage(memory),
      _timers(timer_capacity(parts.config.algo.tables.flow_capacity), memory), _packets_per_path(memory),
      _path_stats(memory), _round_trips(memory), _minimums(_table.set_count(), memory), _path_rates(memory),
      _selector(config::selector_options(parts.config.algo), _table.set_count(), memory),
      _headers(parts.config.outer, parts.config.auth_key.has_value()),
      _flow_cache(parts.config.algo.tables.flow_capacity, memory), _flow_slots(std::move(slots)),
      _flow_queue_storage(memory), _probe_outstanding(memory)
{
    const engine_config& config = _config;
    const auto& algo = config.algo;
    _wire_overhead = static_cast<std::uint32_t>(_headers.data_size(wire::max_anchors));
    set_policy(algo.selection.policy);
    _policy_rng = common::rng(algo.selection.seed ^ (0x9e3779b97f4a7c15ULL * (config.worker + 1u)));
    // First transmissions go in place once the field that remembers the
    // host frame's place exists; if DPDK refuses it, every one is chained
    // (and counted in send_chained).
    wire::register_frame_field();
    _tag_mask = static_cast<std::uint16_t>((1u << config.entropy_tag_bits) - 1);

    // Flow slots, all allocated now.
    const std::uint32_t flows = algo.tables.flow_capacity;
    _flows.reserve(flows);
    const std::size_t queue_slots = mbuf_fifo::slots_for(config.flow_queue_packets);
    _flow_queue_storage.assign(static_cast<std::size_t>(flows) * queue_slots, nullptr);
    for (std::uint32_t i = 0; i < flows; ++i) {
        _flows.emplace_back(algo.retransmit.window_packets, algo.congestion.aimd, _burst_bytes, memory);
        _flows.back().queue = mbuf_fifo(
            std::span<rte_mbuf*>(_flow_queue_storage.data() + static_cast<std::size_t>(i) * queue_slots, queue_slots),
            config.flow_queue_packets);
    }
    // A power of two: the ready list wraps with a mask.
    _ready_storage.assign(std::bit_ceil(std::max(flows, 1u)), 0);
    if (algo.congestion.aimd.fair.coupled_paths) {
        _path_rates.resize(flows);
        _coupled = algo.congestion.aimd.variant == congestion::cc_variant::fair;
    }
    _packets_per_path.assign(_table.paths().capacity(), 0);
    _path_stats.assign(_table.paths().capacity(), path_counters{});
    _round_trips.assign(_table.paths().capacity(), retransmit::rto_estimator{});
    _probe_outstanding.assign(_table.paths().capacity(), 0);
}

void send_side::release_all() noexcept
{
    for (auto& f : _flows) {
        const freed_frames n = free_frames(f);
        _counters.stop_free_queued += n.queued;
        _counters.stop_free_in_flight += n.in_flight;
    }
}

void send_side::poll(time_ns now) noexcept
{
    run_timers(now);
    transmit(now, _config.poll_budget);
    age_flows(now);
}

void send_side::reset_path_counters(tables::path_id pid) noexcept
{
    if (pid < _packets_per_path.size()) {
        _packets_per_path[pid] = 0;
        _path_stats[pid] = path_counters{};
        _round_trips[pid].reset();
    }
}

std::uint32_t send_side::tear_down_set(std::uint32_t set) noexcept
{
    std::uint32_t n = 0;
    for (std::uint32_t i = 0; i < _flows.size(); ++i) {
        if (_flows[i].active && _flows[i].set == set) {
            tear_down(i);
            ++n;
        }
    }
    return n;
}

void send_side::tear_down(std::uint32_t index) noexcept
{
    const freed_frames n = free_frames(_flows[index]);
    _counters.data_drop_destination_removed += n.queued + n.in_flight;
    ++_counters.flow_removed_with_destination;
    ++_host_room.changes; // its refused frames are the caller's to drop now
    evict(index);
}

time_ns send_side::path_timeout(tables::path_id pid, std::uint8_t backoff) const noexcept
{
    const auto& rt = _config.algo.retransmit;
    const time_ns real = _table.path(pid).real();
    const time_ns two_real = real > std::numeric_limits<time_ns>::max() / 4 ? std::numeric_limits<time_ns>::max() / 2
                                                                            : 2 * real;
    time_ns timeout = std::max(two_real, rt.min_timeout_ns);
    if (rt.rtt_timeout) {
        // Before its first sample a path has the configured initial timeout
        // (RFC 6298 §2.1), after it the estimate.
        timeout = std::max(timeout, _round_trips[pid].timeout_or(rt.initial_timeout_ns));
    }
    if (backoff == 0) [[likely]] {
        return timeout;
    }
    // Doubled per timeout in a row (RFC 6298 §5.5), up to the cap; never
    // below the rules above.
    const time_ns cap = std::max(rt.max_timeout_ns, timeout);
    for (std::uint8_t i = 0; i < backoff && timeout < cap; ++i) {
        timeout *= 2;
    }
    return std::min(timeout, cap);
}

void send_side::schedule(std::uint32_t index, timer_kind kind, std::uint8_t slot, time_ns at) noexcept
{
    _timers.push(timer_entry{at, index, _flows[index].generation, kind, slot});
}

void send_side::arm_path_timer(std::uint32_t index, std::uint8_t slot, time_ns now) noexcept
{
    auto& f = _flows[index];
    if (f.window.outstanding_on(slot) == 0) {
        f.deadline[slot] = 0;
        return;
    }
    const tables::path_id pid = f.paths->pids[slot];
    f.deadline[slot] = now + path_timeout(pid, backoff_of(f, slot));
    const auto bit = static_cast<std::uint16_t>(1u << slot);
    if ((f.path_pending & bit) == 0) {
        f.path_pending |= bit;
        schedule(index, timer_kind::path_timeout, slot, f.deadline[slot]);
    }
}

void send_side::run_timers(time_ns now) noexcept
{
    while (!_timers.empty() && _timers.top().at <= now) {
        const timer_entry e = _timers.top();
        _timers.pop();
        auto& f = _flows[e.flow];
        // The pending flags belong to the slot, not to one generation of its
        // flow: an entry left by an evicted flow still clears its flag, and
        // the slot's current flow (if any) then gets what it is due. So at
        // most one entry per (slot, kind, path) is ever in the heap, whatever
        // the churn, and the heap stays within its reservation.
        if (e.kind != timer_kind::path_timeout) {
            if (e.kind == timer_kind::credit_wait) {
                // The wait may be over (credit_allows decides); a credit
                // that came meanwhile made the flow ready already.
                f.credit.timer_pending = false;
            } else {
                f.pace_pending = false;
            }
            if (f.active) {
                make_ready(e.flow);
            }
            continue;
        }
        const auto bit = static_cast<std::uint16_t>(1u << e.slot);
        f.path_pending &= static_cast<std::uint16_t>(~bit);
        if (!f.active) {
            continue;
        }
        const time_ns deadline = f.deadline[e.slot];
        if (deadline == 0) {
            continue;
        }
        if (deadline > now) {
            // Pushed back by ACKs since this entry was queued.
            f.path_pending |= bit;
            schedule(e.flow, timer_kind::path_timeout, e.slot, deadline);
            continue;
        }
        // Alg. 3 ReTx(pid): no ACK on this path for 2 x realVal.
        f.deadline[e.slot] = 0;
        const std::uint32_t lost = f.window.on_timeout(e.slot);
        _counters.loss_by_timeout += lost;
        if (lost > 0) {
            // The timeout was too short or the receiver is gone: wait twice
            // as long before the next (a dead or blackholed receiver must
            // not draw a resend storm).
            if (std::uint8_t& backoff = backoff_of(f, e.slot); backoff < max_backoff) {
                _counters.timeout_backoff += backoff > 0;
                ++backoff;
            }
            if (f.silent_timeouts < stalled_timeouts) {
                ++f.silent_timeouts;
                // Stalled: from_host drops its frames instead of refusing them.
                _host_room.changes += f.silent_timeouts == stalled_timeouts;
            }
        }
        if (lost > 0 && _other_policy) {
            policy_on_timeout(f, e.slot, now);
        }
        if (lost > 0 && coupled_paths()) {
            // A path that lost its packets (a failed link) answers no ACK
            // that could cut its rate: the timeout does.
            path_rates(e.flow).on_timeout(_config.algo.congestion.aimd, e.slot);
            apply_path_rates(e.flow);
        }
        _path_stats[f.paths->pids[e.slot]].losses += lost;
        make_ready(e.flow);
    }
}

std::uint32_t send_side::usable_slots(std::uint32_t set) const noexcept
{
    const tables::path_set& s = _table.set(set);
    std::uint32_t bits = 0;
    for (std::uint8_t slot = 0; slot < s.count; ++slot) {
        bits |= static_cast<std::uint32_t>(_table.path(s.pids[slot]).usable()) << slot;
    }
    return bits;
}

congestion::coupled_rates& send_side::path_rates(std::uint32_t index) noexcept
{
    auto& r = _path_rates[index];
    const auto& f = _flows[index];
    if (r.paths() != f.paths->count) {
        r.start(f.paths->count, f.rate.rate_bps()); // the flow began under paper or per-flow fair
    }
    return r;
}

int send_side::coupled_slot(std::uint32_t index) noexcept
{
    const tables::path_set& s = *_flows[index].paths;
    std::array<double, congestion::max_coupled_paths> factors{};
    for (std::uint8_t slot = 0; slot < s.count; ++slot) {
        const auto& e = _table.path(s.pids[slot]);
        factors[slot] = e.usable() ? congestion::coupled_rates::latency_factor(e.real(), e.uncongested_ns) : 0.0;
    }
    return path_rates(index).draw(factors, _policy_rng.next32());
}

congestion::aimd_action send_side::coupled_on_ack(std::uint32_t index, tables::path_id pid, time_ns now) noexcept
{
    const tables::path_entry& e = _table.path(pid);
    const time_ns real = e.real();
    const auto action = path_rates(index).on_ack(_config.algo.congestion.aimd, e.slot, now, real,
                                                 std::max<time_ns>(real - e.uncongested_ns, 0));
    apply_path_rates(index);
    return action;
}

void send_side::apply_path_rates(std::uint32_t index) noexcept
{
    auto& f = _flows[index];
    f.rate.set_total(path_rates(index).total_bps(_config.algo.congestion.aimd, usable_slots(f.set)));
}

std::uint64_t send_side::unfinished_frames() const noexcept
{
    std::uint64_t n = 0;
    for (const auto& f : _flows) {
        if (f.active) {
            n += f.queue.size() + f.window.in_window();
        }
    }
    return n;
}

time_ns send_side::next_event(time_ns now) const noexcept
{
    time_ns next = _timers.next_due(now);
    if (_ready_count > 0) {
        next = std::min(next, std::max(now, _port_busy_until));
    }
    return next;
}

void send_side::evict(std::uint32_t index) noexcept
{
    auto& f = _flows[index];
    _flow_slots.remove(&f.key, f.hash, index);
    _flow_cache.forget(f.hash, index);
    f.active = false;
    ++f.generation;
    f.deadline = {}; // the next flow of this slot starts from it (create_flow)
    // pace_pending, path_pending and in_ready stay: entries for this slot
    // may still sit in the heap and the ready list (run_timers, transmit),
    // and a flow that reuses the slot must not get a second one.
    --_active_flows;
}

void send_side::age_flows(time_ns now) noexcept
{
    if (_active_flows == 0) {
        return;
    }
    sweep(_aging_hand, _flows.size(), aging_slots_per_poll, [&](std::uint32_t index) {
        // The flow's first line first: idle() reads its queue and window,
        // further in, and most flows a poll passes were active a moment ago.
        const auto& f = _flows[index];
        if (f.active && !f.in_ready && now - f.last_active > _config.flow_idle_ns && f.idle()) {
            evict(index);
            ++_counters.flow_evicted_idle;
        }
    });
}

} // namespace laps::pipeline
