// The send path: host frames into flows, flows onto paths (Alg. 1, Eq. 1),
// paced at their AIMD rate (Alg. 2), kept for resend (Alg. 3).
#include "pipeline/send_side.hpp"
#include "wire/key_hash.hpp"
#include "wire/mbuf_build.hpp"
#include "wire/mbuf_parse.hpp"

#include <rte_hash.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>

namespace laps::pipeline {

std::uint16_t send_side::steering_tag(std::uint32_t flow_hash) const noexcept
{
    // t = worker + workers * k, k < 2^bits / workers: t % workers == worker
    // whatever k, and k spreads this worker's flows over the tag space, so a
    // receiver with any number of workers (t % its workers) shares them out.
    // k comes from the high bits of a remix of the hash: the host dispatcher
    // picked this worker by flow_hash % workers, and reusing those low bits
    // would tie k to the worker (and a receiver with 2 x workers would get
    // every flow of this worker on one of its workers).
    const std::uint32_t tags = 1u << _config.entropy_tag_bits;
    const std::uint32_t choices = tags / _config.workers;
    const std::uint32_t k = ((flow_hash * 0x9E3779B1u) >> 16) % choices;
    return static_cast<std::uint16_t>(_config.worker + _config.workers * k);
}

std::uint16_t send_side::entropy(std::uint32_t flow_id, tables::path_id pid, std::uint16_t tag) const noexcept
{
    // One (flow, path) keeps one UDP source port, hence one route through any
    // ECMP stage between anchors: Alg. 3 needs per-path in-order delivery.
    std::uint32_t h = flow_id * 0x9E3779B1u ^ (static_cast<std::uint32_t>(pid) + 1) * 0x85EBCA6Bu;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return static_cast<std::uint16_t>(((h & ~_tag_mask) | (tag & _tag_mask)) & wire::entropy_mask);
}

namespace {

// Whether the flow cache's candidate is the flow of `key`: a live flow with that key.
bool is_flow_of(const send_flow& f, const wire::flow_key& key) noexcept
{
    return f.active && flow_cache::same_key(f.key, key);
}

// Whether `key` is the flow of the frame before. The word with the ports
// and the QP first, where the flows of one host differ most often (and the
// flows of the interleaved bench), so a frame that starts a run costs one
// compare; then every byte.
bool continues_run(const wire::flow_key& before, const wire::flow_key& key) noexcept
{
    constexpr std::size_t ports_word = offsetof(wire::flow_key, src_port);
    static_assert(ports_word % 8 == 0 && offsetof(wire::flow_key, qp) < ports_word + 8);
    std::uint64_t x;
    std::uint64_t y;
    std::memcpy(&x, reinterpret_cast<const char*>(&before) + ports_word, 8);
    std::memcpy(&y, reinterpret_cast<const char*>(&key) + ports_word, 8);
    if (x != y) [[likely]] {
        return false;
    }
    return flow_cache::same_key(before, key);
}

} // namespace

std::int32_t send_side::cached_flow(const wire::flow_key& key, std::uint32_t hash) const noexcept
{
    const std::uint32_t slot = _flow_cache.find(hash);
    return slot != flow_cache::none && is_flow_of(_flows[slot], key) ? static_cast<std::int32_t>(slot) : -1;
}

send_flow* send_side::find_flow(const wire::flow_key& key, std::uint32_t hash) noexcept
{
    std::int32_t found = cached_flow(key, hash);
    if (found < 0) {
        found = _flow_slots.find(&key, hash);
        if (found >= 0) {
            _flow_cache.remember(hash, static_cast<std::uint32_t>(found));
        }
    }
    return found >= 0 ? &_flows[static_cast<std::uint32_t>(found)] : nullptr;
}

send_flow* send_side::create_flow(const wire::classification& c, std::uint32_t hash, std::uint32_t set,
                               time_ns now) noexcept
{
    const std::int32_t position = _flow_slots.add(&c.key, hash);
    if (position < 0) {
        return nullptr;
    }
    auto& f = _flows[static_cast<std::uint32_t>(position)];
    _flow_cache.remember(hash, static_cast<std::uint32_t>(position));
    f.active = true;
    f.key = c.key;
    f.set = set;
    f.paths = &_table.set(set);
    f.fabric_ip = f.paths->fabric_ipv4;
    f.max_anchors = f.paths->max_anchors;
    f.hash = hash;
    f.tag = steering_tag(f.hash);
    f.last_active = now;
    f.rate = congestion::aimd(_config.algo.congestion.aimd);
    if (!_path_rates.empty()) [[unlikely]] {
        // Coupled paths: the new flow's rate split as Eq. 1 would send its
        // packets, on what the instance's other flows measured.
        _selector.rebuild(_table, set);
        _path_rates[static_cast<std::uint32_t>(position)].start(_config.algo.congestion.aimd, f.paths->count,
                                                                 f.rate.rate_bps(), _selector.cache(set).weights.data());
    }
    f.pacer = congestion::pacer(_burst_bytes, now);
    f.window.reset();
    // f.deadline is all 0: evict() cleared it (or the slot was never used).
    f.backoff = 0;
    f.path_backoff = {};
    f.silent_timeouts = 0;
    f.host_call = _host_call - 1;
    const bool timer_pending = f.credit.timer_pending; // stays with the slot, as pace_pending
    f.credit = {};
    f.credit.unscheduled = _config.algo.congestion.aimd.credit.unscheduled_bytes;
    f.credit.timer_pending = timer_pending;
    f.credit.first_seq = f.window.next_seq();
    start_flow_policy(f, static_cast<std::uint8_t>(c.traffic_class >> 2));
    // pace_pending and path_pending stay with the slot (send_side::run_timers).
    ++_active_flows;
    ++_counters.flow_created;
    return &f;
}

void send_side::pass_or_drop(rte_mbuf* m, bool pass, std::uint64_t& passed, std::uint64_t& dropped) noexcept
{
    // A host frame laps does not encapsulate: taken either way, and counted.
    ++_counters.host_rx;
    if (pass) {
        ++passed;
        stage_to_fabric(m);
    } else {
        ++dropped;
        rte_pktmbuf_free(m);
    }
}

std::uint16_t send_side::take_host(rte_mbuf** frames, std::uint16_t count, time_ns now) noexcept
{
    std::uint16_t left = 0;
    for (std::uint16_t done = 0; done < count;) {
        const auto n = static_cast<std::uint16_t>(std::min<std::uint32_t>(count - done, host_lookup_burst));
        // Frames left behind go to the front: never past one not yet read.
        take_host_burst(frames + done, n, frames, left, now);
        done = static_cast<std::uint16_t>(done + n);
    }
    transmit(now, _config.poll_budget);
    return static_cast<std::uint16_t>(count - left);
}

void send_side::take_host_burst(rte_mbuf* const* frames, std::uint16_t count, rte_mbuf** left_out, std::uint16_t& left,
                             time_ns now) noexcept
{
    // Classify the whole burst and find its flows in the exact-match cache
    // (pipeline/flow_cache.hpp); look the rest up in one rte_hash bulk
    // lookup: the table's cache misses overlap (prefetched buckets) instead
    // of following one another, which is what matters once the flow table
    // outgrows the caches.
    union classified {
        classified() noexcept {} // no zeroing: each slot is written before use
        wire::classification c;
    };
    std::array<classified, host_lookup_burst> classes;
    // The keys' hashes, computed here (wire/key_hash.hpp): the same values
    // rte_hash would compute through its hash function pointer.
    std::array<hash_sig_t, host_lookup_burst> hashes;
    std::array<const wire::flow_key*, host_lookup_burst> keys;
    std::array<std::int32_t, host_lookup_burst> positions;
    // The cache's misses, compacted for rte_hash: their place in `positions`.
    std::array<const void*, host_lookup_burst> miss_keys;
    std::array<hash_sig_t, host_lookup_burst> miss_hashes;
    std::array<std::int32_t, host_lookup_burst> miss_positions;
    std::array<std::uint8_t, host_lookup_burst> miss_of;
    // Per classified frame: its lookup. A run of one flow's frames (an
    // elephant's burst, an RDMA QP's, a collective's) shares its first
    // frame's: one cache probe, one rte_hash lookup at most, one flow
    // creation (docs/pipeline.md "Burst work").
    std::array<std::uint32_t, host_lookup_burst> lookup_of;
    std::uint32_t lookups = 0;
    for (std::uint16_t i = 0; i < count; ++i) {
        if (wire::classify(frames[i], classes[i].c) != wire::classify_status::ok) {
            continue;
        }
        const wire::flow_key& key = classes[i].c.key;
        if (lookups != 0 && continues_run(*keys[lookups - 1], key)) {
            lookup_of[i] = lookups - 1;
            continue;
        }
        keys[lookups] = &key;
        hashes[lookups] = wire::key_hash(key);
        lookup_of[i] = lookups;
        _flow_cache.prefetch(hashes[lookups++]);
    }
    // The cache's candidates, and the lines that prove them (the slot's
    // `active` and its key): a hit then costs no miss of its own once the
    // flow table outgrows the caches, as rte_hash's bulk lookup prefetches
    // its buckets and keys.
    for (std::uint32_t i = 0; i < lookups; ++i) {
        const std::uint32_t slot = _flow_cache.find(hashes[i]);
        positions[i] = slot == flow_cache::none ? -1 : static_cast<std::int32_t>(slot);
        if (slot != flow_cache::none) {
            const send_flow& f = _flows[slot];
            rte_prefetch0(&f);
            rte_prefetch0(&f.key);
            rte_prefetch0(reinterpret_cast<const char*>(&f.key + 1) - 1);
        }
    }
    std::uint32_t misses = 0;
    for (std::uint32_t i = 0; i < lookups; ++i) {
        if (positions[i] >= 0) {
            if (is_flow_of(_flows[static_cast<std::uint32_t>(positions[i])], *keys[i])) {
                continue;
            }
            positions[i] = -1;
        }
        miss_keys[misses] = keys[i];
        miss_hashes[misses] = hashes[i];
        miss_of[misses++] = static_cast<std::uint8_t>(i);
    }
    if (misses != 0) {
        _flow_slots.find_bulk(miss_keys.data(), miss_hashes.data(), misses, miss_positions.data());
        for (std::uint32_t i = 0; i < misses; ++i) {
            positions[miss_of[i]] = miss_positions[i];
            if (miss_positions[i] >= 0) {
                _flow_cache.remember(miss_hashes[i], static_cast<std::uint32_t>(miss_positions[i]));
            }
        }
    }
    // The flows' state is touched next, frame by frame: start those cache
    // misses now, so that they overlap too. Only the part the send path uses
    // (up to the key, flow_state.hpp).
    for (std::uint32_t i = 0; i < lookups; ++i) {
        if (positions[i] >= 0) {
            const auto* f = reinterpret_cast<const char*>(&_flows[static_cast<std::uint32_t>(positions[i])]);
            for (std::size_t line = 0; line < send_flow::hot_bytes; line += RTE_CACHE_LINE_SIZE) {
                rte_prefetch0(f + line);
            }
        }
    }

    for (std::uint16_t i = 0; i < count; ++i) {
        rte_mbuf* m = frames[i];
        const wire::classification& c = classes[i].c;
        if (!c.ok()) {
            if (c.status == wire::classify_status::not_ip) {
                pass_or_drop(m, _config.non_ip == local_frame_policy::pass, _counters.host_passthrough_non_ip,
                             _counters.host_drop_non_ip);
            } else {
                ++_counters.host_rx;
                ++_counters.host_drop_malformed;
                rte_pktmbuf_free(m);
            }
            continue;
        }
        if (c.destination.is_link_scope()) {
            // Not for spraying: its scope ends at the host's own link.
            pass_or_drop(m, _config.link_local == local_frame_policy::pass, _counters.host_passthrough_link_local,
                         _counters.host_drop_link_local);
            continue;
        }
        const std::uint32_t lookup = lookup_of[i];
        const std::uint32_t hash = hashes[lookup];
        const std::int32_t position = positions[lookup];
        // A miss may be a flow that an earlier frame of this burst created.
        send_flow* f = position >= 0 ? &_flows[static_cast<std::uint32_t>(position)] : find_flow(c.key, hash);
        // A flow keeps its destination's path set for life (removing the
        // destination tears its flows down), so only a new flow needs the PST.
        std::uint32_t set = 0;
        std::uint8_t max_anchors = 0;
        if (f != nullptr) {
            set = f->set;
            max_anchors = f->max_anchors;
        } else if (const auto found = _tables.destinations().find(c.destination)) {
            set = *found;
            max_anchors = _table.set(set).max_anchors;
        } else {
            pass_or_drop(m, _config.unknown_destination == unknown_destination_policy::pass,
                         _counters.host_passthrough_unknown_dst, _counters.host_drop_unknown_dst);
            continue;
        }
        // Outer IPv4 length = IPv4 + UDP + LAPS header (and trailer) + the whole host frame.
        const std::size_t outer_ip_length = _headers.data_size(max_anchors) - wire::ether_size + m->pkt_len;
        if (_config.outer.mtu != 0 && outer_ip_length > _config.outer.mtu) {
            pass_or_drop(m, _config.oversize == oversize_policy::pass, _counters.host_passthrough_oversize,
                         _counters.host_drop_oversize);
            continue;
        }
        if (f == nullptr) {
            f = create_flow(c, hash, set, now);
        }
        if (f == nullptr) {
            ++_counters.host_rx;
            ++_counters.host_drop_flow_table_full;
            rte_pktmbuf_free(m);
            continue;
        }
        if (position < 0) {
            // The rest of the run finds it here (nothing in this loop removes a flow).
            positions[lookup] = static_cast<std::int32_t>(f - _flows.data());
        }
        if (f->host_call == _host_call) {
            // An earlier frame of this flow stayed with the caller: so does
            // this one, behind it (the flow's order holds).
            left_out[left++] = m;
            continue;
        }
        if (f->queue.full()) {
            // Send what the pacers and windows allow, then look again.
            transmit(now, _config.poll_budget);
        }
        if (f->queue.full()) {
            if (f->silent_timeouts >= stalled_timeouts) {
                // No ACK through several timeouts, each twice as long (a
                // blackholed or dead receiver): holding the host port for it
                // would stop every other flow. Its frames are dropped instead.
                ++_counters.host_rx;
                ++_counters.host_drop_flow_stalled;
                rte_pktmbuf_free(m);
                continue;
            }
            // Backpressure on this flow only: its frames stay with the
            // caller, the other flows' frames are still taken.
            ++_counters.host_backpressure;
            f->host_call = _host_call;
            left_out[left++] = m;
            continue;
        }
        ++_counters.host_rx;
        if (f->window.full()) {
            ++_counters.send_window_full;
        }
        const bool was_idle = f->queue.empty();
        f->queue.push(m);
        f->last_active = now;
        const auto index = static_cast<std::uint32_t>(f - _flows.data());
        if (was_idle && may_send_now(*f, now)) {
            // Nothing of this flow waits before this frame: send it now
            // instead of a turn through the ready list (queue only what
            // must wait). A flow the pacer or the port holds back waits
            // for its timer or joins the list as before.
            if (send_one(index, now) == send_result::port_busy) {
                make_ready(index);
            }
            continue;
        }
        make_ready(index);
    }
}

bool send_side::may_send_now(const send_flow& f, time_ns now) const noexcept
{
    // Flows already waiting for the port go first (_ready_count): one that
    // skipped them would take the port's next slot each time.
    return !f.in_ready && !f.pace_pending && f.window.lost_pending() == 0 && !f.window.full() &&
           !_to_fabric.full() && now >= _port_busy_until && _ready_count == 0;
}

void send_side::make_ready(std::uint32_t index) noexcept
{
    auto& f = _flows[index];
    if (f.in_ready || f.pace_pending || !f.has_work()) {
        return;
    }
    f.in_ready = true;
    const auto mask = static_cast<std::uint32_t>(_ready_storage.size()) - 1; // a power of two
    _ready_storage[(_ready_head + _ready_count) & mask] = index;
    ++_ready_count;
}

void send_side::keep_turn(std::uint32_t index) noexcept
{
    // Just taken from the head: the slot before the head is free.
    const auto mask = static_cast<std::uint32_t>(_ready_storage.size()) - 1; // a power of two
    _ready_head = (_ready_head - 1) & mask;
    _ready_storage[_ready_head] = index;
    ++_ready_count;
    _flows[index].in_ready = true;
}

void send_side::transmit(time_ns now, std::uint32_t budget) noexcept
{
    // Round robin over ready flows, one packet per turn.
    while (budget-- > 0 && _ready_count > 0 && !_to_fabric.full() && now >= _port_busy_until) {
        const std::uint32_t index = _ready_storage[_ready_head];
        _ready_head = (_ready_head + 1) & (static_cast<std::uint32_t>(_ready_storage.size()) - 1);
        --_ready_count;
        _flows[index].in_ready = false;
        if (!_flows[index].active) {
            continue; // torn down while queued
        }
        const send_result r = send_one(index, now);
        if (r == send_result::port_busy) {
            // The flow keeps its turn: sent to the back of the list, it would
            // find the port busy again each time, behind whichever flow
            // took the slot the port freed, and never send (a mouse behind
            // one elephant waited 22 ms for the elephant to end).
            keep_turn(index);
            break; // next_event() tells when the port has room again
        }
        if (r == send_result::sent) {
            make_ready(index); // it may send more
        }
    }
}

void send_side::send_probe(tables::path_id pid, const send_flow& f, time_ns now) noexcept
{
    const auto& e = _table.path(pid);
    const std::uint32_t seq = _probe_seq;
    _probe_seq = _probe_seq == 0xffffffffu ? 1 : _probe_seq + 1; // never 0 (no probe outstanding)
    auto header = wire::make_probe_header(pid, now, seq, {e.anchors.data(), e.anchor_count}, _config.epoch);
    if (_signer != nullptr) {
        header.flags |= wire::flag_authenticated; // room for the trailer, signed below
    }
    rte_mbuf* probe = wire::build_probe(_config.control_pool, _config.outer, f.fabric_ip,
                                        entropy(0, pid, _config.worker), header);
    if (probe == nullptr) {
        ++_counters.probe_drop_no_mbuf;
        return;
    }
    sign(probe, header.anchor_count);
    // Only the answer to this probe may change the entry (a newer probe on
    // the same path replaces it).
    _probe_outstanding[pid] = seq;
    ++_counters.probe_sent;
    ++_path_stats[pid].probes;
    stage_to_fabric(probe);
}

// Sends one packet of flow `index` if it may; returns whether it did.
send_side::send_result send_side::send_one(std::uint32_t index, time_ns now) noexcept
{
    // The engine's parts in locals: as members (references) they would be
    // read again after every header byte written (docs/PERFORMANCE.md §21).
    const engine_config& config = _config;
    engine_counters& counters = _counters;
    auto& f = _flows[index];
    const auto flow_id = _flow_ids.make(index, f.generation);

    // Alg. 3: lost packets go before new data.
    retransmit::seq_t seq = 0;
    std::uint64_t handle = 0;
    const bool resend = f.window.next_lost(seq, handle);
    rte_mbuf* frame = nullptr;
    std::uint32_t frame_bytes = 0; // the host frame's
    if (resend) {
        frame = reinterpret_cast<rte_mbuf*>(handle);
        frame_bytes = wire::sent_frame_length(frame);
    } else {
        if (f.queue.empty()) {
            return send_result::waits;
        }
        if (f.window.full()) {
            return send_result::waits; // an ACK will wake the flow
        }
        frame = f.queue.front();
        frame_bytes = frame->pkt_len;
        seq = f.window.next_seq();
    }
    // Receiver-paced credits: a DATA a credit calls is paced by the receiver
    // (pipeline/credits.cpp), not by the flow's rate.
    bool on_credit = false;
    const bool credit = config.algo.congestion.aimd.variant == congestion::cc_variant::credit;
    if (credit) [[unlikely]] {
        if (!credit_allows(index, now)) {
            return send_result::waits; // a CREDIT, or the end of the wait, wakes the flow
        }
        on_credit = f.credit.unscheduled <= 0 && static_cast<std::int32_t>(f.credit.granted - f.credit.used) > 0;
    }

    // Alg. 2: the flow's rate, enforced by its pacer.
    const std::uint32_t wire_bytes = frame_bytes + _wire_overhead;
    const time_ns ready_at = on_credit ? now : f.pacer.ready_at(now, wire_bytes, f.rate.pace(), _burst_bytes);
    if (ready_at > now) {
        ++counters.send_paced;
        f.pace_pending = true;
        schedule(index, timer_kind::pace, 0, ready_at);
        return send_result::waits;
    }
    if (config.port_rate_bps > 0.0) {
        const time_ns port_at = _port_pacer.ready_at(now, wire_bytes, _port_rate, _burst_bytes);
        if (port_at > now) {
            _port_busy_until = port_at;
            return send_result::port_busy;
        }
    }

    softmax::choice choice;
    if (on_credit && f.credit.has_hint && _table.path(f.credit.hint).usable()) [[unlikely]] {
        // The DATA a credit calls goes to the port that granted it, on the
        // path the CREDIT names (pipeline/credits.cpp). No draw and no probe:
        // the receiver chose the path, and a probe here would only take
        // room at the port the credits pace (docs/congestion.md "Receiver-paced
        // credits", item 5).
        f.credit.has_hint = false;
        choice.path = f.credit.hint;
        choice.has_path = true;
    } else {
        // Alg. 1: probe a stale path if any, pick a path by Eq. 1.
        if (on_credit) {
            f.credit.has_hint = false; // its path is unusable
        }
        choice = _other_policy ? other_policy_choice(f, now) : _selector.select(_table, f.set, now, f.hash);
        if (choice.has_probe) {
            send_probe(choice.probe, f, now);
        }
        if (coupled_paths() && choice.has_path && !_other_policy) [[unlikely]] {
            // The path in proportion to the flow's per-path rates, not Eq. 1
            // (Alg. 1's probing above stays).
            if (const int slot = coupled_slot(index); slot >= 0) {
                choice.path = f.paths->pids[static_cast<std::size_t>(slot)];
            }
        }
    }
    if (!choice.has_path) {
        ++counters.send_no_path;
        f.pace_pending = true;
        schedule(index, timer_kind::retry, 0, now + config.algo.retransmit.min_timeout_ns);
        return send_result::waits;
    }
    const auto& path = _table.path(choice.path);

    const std::span<const std::uint32_t> anchors{path.anchors.data(),
                                                 std::min<std::size_t>(path.anchor_count, wire::max_anchors)};
    const auto header_size = static_cast<std::uint16_t>(_headers.data_size(anchors.size()));
    // A first transmission goes in the host frame's own headroom when it
    // can, a resend too when nothing holds the buffer any more; otherwise
    // behind a header segment (wire/mbuf_encap.hpp).
    wire::encap_error error = wire::encap_error::ok;
    rte_mbuf* packet = nullptr;
    if (resend) {
        packet = wire::resend_packet(frame, config.control_pool, config.outer, header_size, error);
    } else {
        bool chained = false;
        packet = wire::first_transmission(frame, config.control_pool, config.outer, header_size, chained, error);
        counters.send_chained += chained;
    }
    if (packet != nullptr) {
        wire::data_fields fields;
        fields.pid = choice.path;
        fields.now = now;
        fields.flow_id = flow_id;
        fields.seq = seq;
        // The receiver may start a flow it forgot here (docs/wire-format.md).
        fields.window_offset = static_cast<std::uint16_t>(seq - f.window.lowest_unacked());
        fields.epoch = config.epoch;
        fields.resend = resend;
        if (credit) [[unlikely]] {
            fields.pull = spend_credit(f, frame_bytes, seq, resend);
        }
        _headers.data(rte_pktmbuf_mtod(packet, std::uint8_t*), f.fabric_ip, entropy(flow_id, choice.path, f.tag),
                      fields, anchors, static_cast<std::uint16_t>(frame_bytes));
        sign(packet, anchors.size());
    } else {
        ++_encap_errors[static_cast<std::size_t>(error)];
        if (!resend) {
            ++counters.send_drop_encap;
            f.queue.pop();
            _host_room.freed += f.host_call == _host_call; // room for what it refused
            rte_pktmbuf_free(frame);
            return send_result::sent;
        }
        // A resend that cannot be built now (header pool empty): try
        // later. Not a drop: the frame stays in the window (encap_* counts it).
        f.pace_pending = true;
        schedule(index, timer_kind::retry, 0, now + config.algo.retransmit.min_timeout_ns);
        return send_result::waits;
    }

    if (!on_credit) {
        f.pacer.try_send(now, wire_bytes, f.rate.pace(), _burst_bytes);
    }
    if (config.port_rate_bps > 0.0) {
        _port_pacer.try_send(now, wire_bytes, _port_rate, _burst_bytes);
    }
    if (resend) {
        f.window.resent(seq, path.slot, static_cast<std::uint32_t>(now));
        ++counters.data_resent;
    } else {
        f.queue.pop();
        // A flow that refused frames since the last from_host (its queue
        // was full) has room for one now.
        _host_room.freed += f.host_call == _host_call;
        f.sent_bytes += frame_bytes;
        f.window.send_new(path.slot, reinterpret_cast<std::uint64_t>(frame), static_cast<std::uint32_t>(now));
        ++counters.data_sent;
        counters.data_bytes_sent += frame_bytes;
    }
    ++_packets_per_path[choice.path];
    _path_stats[choice.path].bytes += frame_bytes;
    // §III-G: every send on a path restarts its 2 x realVal timer, so it
    // fires only after the path's last packet (a tail drop) goes unanswered.
    arm_path_timer(index, path.slot, now);
    f.last_active = now;
    stage_to_fabric(packet);
    return send_result::sent;
}

// Receiver-paced credits (congestion.cc credit, docs/congestion.md
// "Receiver-paced credits"): whether flow `index` may send its next DATA (a
// first transmission or a resend) now. It may while it has unscheduled bytes or a credit in hand, or once it
// has waited fallback_ns for one; otherwise it waits, woken by a CREDIT or
// by the end of the wait.
bool send_side::credit_allows(std::uint32_t index, time_ns now) noexcept
{
    auto& f = _flows[index];
    auto& c = f.credit;
    if (c.unscheduled > 0 || static_cast<std::int32_t>(c.granted - c.used) > 0 || c.fallback) {
        return true;
    }
    const time_ns fallback_ns = _config.algo.congestion.aimd.credit.fallback_ns;
    if (c.waiting_since < 0) {
        c.waiting_since = now;
        ++_counters.credit_wait;
    } else if (now - c.waiting_since >= fallback_ns) {
        // No credit for a while: lost CREDITs, or a receiver that does not
        // pace. The flow goes on at its rate until one comes (on_credit).
        c.fallback = true;
        c.waiting_since = -1;
        ++_counters.credit_fallback;
        return true;
    }
    if (!c.timer_pending) {
        c.timer_pending = true;
        schedule(index, timer_kind::credit_wait, 0, c.waiting_since + fallback_ns);
    }
    return false;
}

// A DATA of `frame_bytes` with sequence number `seq` leaves: it spends unscheduled bytes, else a credit (none in
// fallback). Returns whether it asks for a credit: it does while the flow
// has more to send (new frames queued behind it, losses to resend). A first
// transmission's PULL asks for a credit for every sequence number up to it
// (docs/wire-format.md "CREDIT"), so the request of a DATA that was lost
// comes with the next DATA that arrives; a resend's asks for one more (the
// credit the resend spent). The receiver also grants the first request it
// gets the window past the unscheduled bytes, in DATA of that request's
// length; the sender accepts as many as DATA of the shortest encapsulation
// would make (any request's length gives no more).
bool send_side::spend_credit(send_flow& f, std::uint32_t frame_bytes, retransmit::seq_t seq, bool resend) noexcept
{
    auto& c = f.credit;
    // Minus this one: next_lost() left a resend counted, a new frame is still queued.
    const std::uint32_t behind = f.window.lost_pending() + f.queue.size() - 1;
    if (c.unscheduled > 0) {
        c.unscheduled -= frame_bytes;
    } else if (static_cast<std::int32_t>(c.granted - c.used) > 0) {
        ++c.used;
    }
    if (behind == 0) {
        return false;
    }
    if (c.pulled == 0) {
        c.window_grants = credit_window_grants(_config.algo.congestion.aimd.credit,
                                               frame_bytes + static_cast<std::uint32_t>(wire::laps_size(0)) +
                                                   static_cast<std::uint32_t>(wire::outer_size));
    }
    if (resend) {
        ++c.pulled;
    } else if (const std::uint32_t upto = seq - c.first_seq + 1; static_cast<std::int32_t>(upto - c.seq_upto) > 0) {
        c.pulled += upto - c.seq_upto;
        c.seq_upto = upto;
    }
    ++_counters.credit_pull_sent;
    return true;
}

} // namespace laps::pipeline
