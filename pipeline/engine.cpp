// Engine construction, teardown, timers and flow aging. The send path is in
// sender.cpp and ack_path.cpp, the receive side in receive_side.cpp, the
// fabric's packets come in through fabric_input.cpp.
#include "pipeline/engine.hpp"
#include "pipeline/aging.hpp"
#include "wire/key_hash.hpp"

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <algorithm>
#include <bit>
#include <limits>

namespace laps::pipeline {

namespace {

softmax::selector_params selector_params(const config::laps_config& c)
{
    softmax::selector_params p;
    p.policy = c.selection.policy;
    p.beta = c.selection.beta;
    p.probing = c.selection.probing;
    p.seed = c.selection.seed;
    p.reps_cache_size = c.selection.reps_cache_size;
    p.reps_freeze_ns = c.selection.reps_freeze_ns;
    return p;
}

std::pmr::memory_resource* memory_of(const engine_config& c)
{
    return c.memory != nullptr ? c.memory : std::pmr::get_default_resource();
}

// Tables of one engine: it is their only user, so every ACK may write (the
// paper's behaviour) unless the config asks for a tolerance.
std::unique_ptr<tables::shared_tables> own_tables(const engine_config& c)
{
    tables::shared_tables_options o;
    o.name = c.name;
    o.pst_capacity = c.algo.tables.pst_capacity;
    o.socket_id = c.socket_id;
    if (c.shared_flows != nullptr) {
        o.shared_pst = &c.shared_flows->destinations();
        o.pst_owner = c.flow_index_tag;
    }
    o.paths = config::path_options(c.algo);
    o.paths.update_tolerance = c.algo.tables.pit_update_tolerance.value_or(0.0);
    o.paths.memory = memory_of(c);
    try {
        return std::make_unique<tables::shared_tables>(c.algo.paths, o);
    } catch (const tables::pst_error& e) {
        throw engine_error("engine '" + c.name + "': " + e.what());
    }
}

// The engine's flow slots: its own rte_hash, or its share of flow_index.
flow_slots slots_for(const engine_config& c, const std::string& suffix, std::uint32_t capacity,
                     std::uint32_t key_len, bool send)
{
    if (c.shared_flows == nullptr) {
        return flow_slots(c.name + suffix, capacity, key_len, c.socket_id);
    }
    return flow_slots(send ? c.shared_flows->send() : c.shared_flows->receive(), capacity, memory_of(c));
}

// Timer entries in flight at most: one pace/retry and one timeout per path slot per flow.
std::size_t timer_capacity(std::uint32_t flows)
{
    return static_cast<std::size_t>(flows) * (1 + tables::max_paths_per_destination);
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

// What the constructor checks before it allocates anything: each error
// names the engine and the setting.
const engine_config& validated(const engine_config& config)
{
    const auto& algo = config.algo;
    if (config.control_pool == nullptr) {
        throw engine_error("engine '" + config.name + "': no control mempool");
    }
    if (algo.tables.flow_capacity > max_flow_capacity) {
        throw engine_error("engine '" + config.name + "': flow_capacity above " + std::to_string(max_flow_capacity));
    }
    if (config.entropy_tag_bits > 8) {
        throw engine_error("engine '" + config.name + "': a steering tag of " +
                           std::to_string(config.entropy_tag_bits) + " bits; at most 8 of the 14 entropy bits");
    }
    if (config.workers == 0 || config.worker >= config.workers ||
        config.workers > (1u << config.entropy_tag_bits)) {
        throw engine_error("engine '" + config.name + "': worker " + std::to_string(config.worker) + " of " +
                           std::to_string(config.workers) + " cannot be reached with " +
                           std::to_string(config.entropy_tag_bits) + " tag bits (" +
                           std::to_string(1u << config.entropy_tag_bits) + " tags)");
    }
    if (algo.retransmit.window_packets > 32768) {
        throw engine_error("engine '" + config.name + "': retransmit.window_packets " +
                           std::to_string(algo.retransmit.window_packets) +
                           " is above 32768 (DATA carries its window offset in 16 bits)");
    }
    if (config.flow_queue_packets == 0 || config.staging_packets == 0) {
        throw engine_error("engine '" + config.name + "': queue sizes must be positive");
    }
    if (config.outer.mtu != 0 && algo.congestion.pacer_burst_bytes < config.outer.mtu + wire::ether_size) {
        throw engine_error("engine '" + config.name + "': congestion.pacer_burst_bytes (" +
                           std::to_string(algo.congestion.pacer_burst_bytes) +
                           ") must hold one full fabric frame (" + std::to_string(config.outer.mtu + wire::ether_size) +
                           " bytes)");
    }
    if (config.shared_flows != nullptr && config.flow_index_tag == 0) {
        throw engine_error("engine '" + config.name + "': a shared flow index needs a non-zero flow_index_tag");
    }
    if (config.auth_key && config.auth_peers == 0) {
        throw engine_error("engine '" + config.name + "': auth_peers must be positive");
    }
    return config;
}

// The signer and verifier of a config with a key; null without one.
std::unique_ptr<wire::authenticator> authenticator_for(const engine_config& config)
{
    if (!config.auth_key) {
        return nullptr;
    }
    try {
        return std::make_unique<wire::authenticator>(*config.auth_key, config.epoch);
    } catch (const wire::auth_error& e) {
        throw engine_error("engine '" + config.name + "': " + e.what());
    }
}

} // namespace

engine::engine(const engine_config& config) : engine(config, own_tables(config), nullptr)
{
}

engine::engine(const engine_config& config, tables::shared_tables& shared) : engine(config, nullptr, &shared)
{
}

engine::engine(const engine_config& config, std::unique_ptr<tables::shared_tables> own, tables::shared_tables* shared)
    : _config(validated(config)), _memory(memory_of(config)), _own_tables(std::move(own)),
      _tables(shared != nullptr ? *shared : *_own_tables), _table(_tables.paths()),
      _burst_bytes(config.algo.congestion.pacer_burst_bytes), _flow_ids(bits_for(config.workers), config.worker),
      _port_pacer(_burst_bytes),
      _port_rate(congestion::pace_rate::from_bps(config.port_rate_bps)), _flows(_memory), _ready_storage(_memory),
      _timers(timer_capacity(config.algo.tables.flow_capacity), _memory), _packets_per_path(_memory),
      _path_stats(_memory), _round_trips(_memory), _minimums(_table.set_count(), _memory), _path_rates(_memory),
      _selector(selector_params(config.algo), _table.set_count(), _memory),
      _headers(config.outer, config.auth_key.has_value()), _flow_cache(config.algo.tables.flow_capacity, _memory),
      _flow_queue_storage(_memory), _probe_outstanding(_memory), _staging_storage(_memory),
      _auth(authenticator_for(config)),
      _receiver(receive_side::engine_parts{_config, _counters, _headers, _to_host, _to_fabric, _auth.get()},
                slots_for(config, "_rf", receive_side::capacity_for(config), sizeof(receive_key), false), _memory),
      _peers(_memory), _peer_keys(_memory)
{
    _wire_overhead = static_cast<std::uint32_t>(_headers.data_size(wire::max_anchors));
    const auto& algo = config.algo;
    set_policy(algo.selection.policy);
    _policy_rng = common::rng(algo.selection.seed ^ (0x9e3779b97f4a7c15ULL * (config.worker + 1u)));
    // First transmissions go in place once the field that remembers the
    // host frame's place exists; if DPDK refuses it, every one is chained
    // (and counted in send_chained).
    wire::register_frame_field();
    _tag_mask = static_cast<std::uint16_t>((1u << config.entropy_tag_bits) - 1);
    for (std::uint32_t t = 0; t < _worker_of_tag.size(); ++t) {
        _worker_of_tag[t] = static_cast<std::uint16_t>(t % config.workers);
    }

    // Flow slots, all allocated now.
    const std::uint32_t flows = algo.tables.flow_capacity;
    const std::uint32_t window = algo.retransmit.window_packets;
    _flow_slots = slots_for(config, "_sf", flows, sizeof(wire::flow_key), true);
    _flows.reserve(flows);
    const std::size_t queue_slots = mbuf_fifo::slots_for(config.flow_queue_packets);
    _flow_queue_storage.assign(static_cast<std::size_t>(flows) * queue_slots, nullptr);
    for (std::uint32_t i = 0; i < flows; ++i) {
        _flows.emplace_back(window, algo.congestion.aimd, _burst_bytes, _memory);
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
    if (_auth) {
        _peer_hash = make_flow_hash(config.name + "_ap", config.auth_peers, sizeof(auth_peer_key), config.socket_id);
        _peers.resize(config.auth_peers);
        _peer_keys.resize(config.auth_peers);
    }

    const std::size_t staging_slots = mbuf_fifo::slots_for(config.staging_packets);
    _staging_storage.assign(2 * staging_slots, nullptr);
    _to_fabric = mbuf_fifo(std::span<rte_mbuf*>(_staging_storage.data(), staging_slots), config.staging_packets);
    _to_host = mbuf_fifo(std::span<rte_mbuf*>(_staging_storage.data() + staging_slots, staging_slots),
                         config.staging_packets);
    _packets_per_path.assign(_table.paths().capacity(), 0);
    _path_stats.assign(_table.paths().capacity(), path_counters{});
    _round_trips.assign(_table.paths().capacity(), retransmit::rto_estimator{});
    _probe_outstanding.assign(_table.paths().capacity(), 0);
}

engine::~engine()
{
    release_all();
}

void engine::release_all() noexcept
{
    std::uint64_t freed = 0;
    const auto free_handle = [&freed](std::uint64_t h) {
        ++freed;
        rte_pktmbuf_free(reinterpret_cast<rte_mbuf*>(h));
    };
    for (auto& f : _flows) {
        _counters.stop_free_queued += f.queue.size();
        f.queue.free_all();
        freed = 0;
        f.window.drain(free_handle);
        _counters.stop_free_in_flight += freed;
    }
    _receiver.release_all();
    _counters.stop_free_staged += _to_fabric.size() + _to_host.size();
    _to_fabric.free_all();
    _to_host.free_all();
}

void engine::add_path(const tables::pit_row& row)
{
    if (!owns_tables()) {
        throw engine_error("engine '" + _config.name + "': its tables are shared: edit the instance's tables");
    }
    _tables.add_path(row);
    reset_path_counters(row.pid);
}

void engine::reset_path_counters(tables::path_id pid) noexcept
{
    if (pid < _packets_per_path.size()) {
        _packets_per_path[pid] = 0;
        _path_stats[pid] = path_counters{};
        _round_trips[pid].reset();
    }
}

void engine::remove_path(tables::path_id pid)
{
    if (!owns_tables()) {
        throw engine_error("engine '" + _config.name + "': its tables are shared: edit the instance's tables");
    }
    _tables.remove_path(pid);
}

void engine::add_destination(const tables::address& destination, std::span<const tables::path_id> pids,
                             std::uint32_t fabric_ipv4)
{
    if (!owns_tables()) {
        throw engine_error("engine '" + _config.name + "': its tables are shared: edit the instance's tables");
    }
    try {
        const std::uint32_t set =
            _tables.reserve_destination(destination, pids, fabric_ipv4, "destination " + destination.to_string());
        prepare_set(set);
        _tables.publish_destination(destination, set);
    } catch (const tables::pst_error& e) {
        throw engine_error(e.what());
    }
}

void engine::remove_destination(const tables::address& destination)
{
    if (!owns_tables()) {
        throw engine_error("engine '" + _config.name + "': its tables are shared: edit the instance's tables");
    }
    std::uint32_t set = 0;
    try {
        set = _tables.unpublish_destination(destination);
    } catch (const tables::pst_error& e) {
        throw engine_error(e.what());
    }
    tear_down_set(set);
    _tables.release_set(set);
}

std::uint32_t engine::tear_down_set(std::uint32_t set) noexcept
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

void engine::tear_down(std::uint32_t index) noexcept
{
    auto& f = _flows[index];
    std::uint64_t freed = f.queue.size();
    f.queue.free_all();
    f.window.drain([&freed](std::uint64_t h) {
        ++freed;
        rte_pktmbuf_free(reinterpret_cast<rte_mbuf*>(h));
    });
    _counters.data_drop_destination_removed += freed;
    ++_counters.flow_removed_with_destination;
    evict(index);
}

void engine::set_path_valid(tables::path_id pid, bool valid) noexcept
{
    if (!_table.contains(pid)) {
        return;
    }
    _tables.set_valid(pid, valid);
}

time_ns engine::path_timeout(tables::path_id pid, std::uint8_t backoff) const noexcept
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

void engine::schedule(std::uint32_t index, timer_kind kind, std::uint8_t slot, time_ns at) noexcept
{
    _timers.push(timer_entry{at, index, _flows[index].generation, kind, slot});
}

void engine::arm_path_timer(std::uint32_t index, std::uint8_t slot, time_ns now) noexcept
{
    auto& f = _flows[index];
    if (f.window.outstanding_on(slot) == 0) {
        f.deadline[slot] = 0;
        return;
    }
    const tables::path_id pid = f.paths->pids[slot];
    f.deadline[slot] = now + path_timeout(pid, f.backoff);
    const auto bit = static_cast<std::uint16_t>(1u << slot);
    if ((f.path_pending & bit) == 0) {
        f.path_pending |= bit;
        schedule(index, timer_kind::path_timeout, slot, f.deadline[slot]);
    }
}

void engine::run_timers(time_ns now) noexcept
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
            f.pace_pending = false;
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
            if (f.backoff < max_backoff) {
                _counters.timeout_backoff += f.backoff > 0;
                ++f.backoff;
            }
            if (f.silent_timeouts < stalled_timeouts) {
                ++f.silent_timeouts;
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

std::uint32_t engine::usable_slots(std::uint32_t set) const noexcept
{
    const tables::path_set& s = _table.set(set);
    std::uint32_t bits = 0;
    for (std::uint8_t slot = 0; slot < s.count; ++slot) {
        bits |= static_cast<std::uint32_t>(_table.path(s.pids[slot]).usable()) << slot;
    }
    return bits;
}

congestion::coupled_rates& engine::path_rates(std::uint32_t index) noexcept
{
    auto& r = _path_rates[index];
    const auto& f = _flows[index];
    if (r.paths() != f.paths->count) {
        r.start(f.paths->count, f.rate.rate_bps()); // the flow began under paper or per-flow fair
    }
    return r;
}

int engine::coupled_slot(std::uint32_t index) noexcept
{
    const tables::path_set& s = *_flows[index].paths;
    std::array<double, congestion::max_coupled_paths> factors{};
    for (std::uint8_t slot = 0; slot < s.count; ++slot) {
        const auto& e = _table.path(s.pids[slot]);
        factors[slot] = e.usable() ? congestion::coupled_rates::latency_factor(e.real(), e.uncongested_ns) : 0.0;
    }
    return path_rates(index).draw(factors, _policy_rng.next32());
}

congestion::aimd_action engine::coupled_on_ack(std::uint32_t index, tables::path_id pid, time_ns now) noexcept
{
    const tables::path_entry& e = _table.path(pid);
    const time_ns real = e.real();
    const auto action = path_rates(index).on_ack(_config.algo.congestion.aimd, e.slot, now, real,
                                                 std::max<time_ns>(real - e.uncongested_ns, 0));
    apply_path_rates(index);
    return action;
}

void engine::apply_path_rates(std::uint32_t index) noexcept
{
    auto& f = _flows[index];
    f.rate.set_total(path_rates(index).total_bps(_config.algo.congestion.aimd, usable_slots(f.set)));
}

void engine::poll(time_ns now) noexcept
{
    run_timers(now);
    transmit(now, _config.poll_budget);
    age_flows(now);
    _receiver.poll(now);
}

std::uint64_t engine::unfinished_frames() const noexcept
{
    std::uint64_t n = 0;
    for (const auto& f : _flows) {
        if (f.active) {
            n += f.queue.size() + f.window.in_window();
        }
    }
    return n;
}

time_ns engine::next_event(time_ns now) const noexcept
{
    time_ns next = _timers.empty() ? std::numeric_limits<time_ns>::max() : std::max(now, _timers.top().at);
    if (_ready_count > 0) {
        next = std::min(next, std::max(now, _port_busy_until));
    }
    return next;
}

void engine::evict(std::uint32_t index) noexcept
{
    auto& f = _flows[index];
    _flow_slots.remove(&f.key, f.hash, index);
    _flow_cache.forget(f.hash, index);
    f.active = false;
    ++f.generation;
    f.deadline = {};
    // pace_pending, path_pending and in_ready stay: entries for this slot
    // may still sit in the heap and the ready list (run_timers, transmit),
    // and a flow that reuses the slot must not get a second one.
    // in_ready stays: the slot may still sit in the ready list, and a flow
    // that reuses the slot must not be queued twice.
    --_active_flows;
}

void engine::age_flows(time_ns now) noexcept
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
