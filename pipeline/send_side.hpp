#pragma once
// The send side of an engine (docs/pipeline.md "Two sides"): host frames
// into flows (classification, the flow cache and table, the PST for a new
// flow), flows onto paths (Alg. 1, Eq. 1, or the other seeds' policies),
// paced at their AIMD rate (Alg. 2) through a ready list, encapsulated and
// kept for resend in the flow's window (Alg. 3); the answers to its DATA
// (ACK, ACK_RUN, PROBE_ACK: PIT, rate, loss), the path timers, idle flows.
//
// The engine owns it; it shares the engine's configuration, tables,
// counters, signer and staging toward the fabric.
// Everything is allocated in the constructor; the data-path calls are
// noexcept and allocate nothing.

#include "congestion/coupled.hpp"
#include "congestion/pacer.hpp"
#include "pipeline/counters.hpp"
#include "pipeline/engine_config.hpp"
#include "pipeline/flow_cache.hpp"
#include "pipeline/flow_slots.hpp"
#include "pipeline/flow_state.hpp"
#include "pipeline/free_batch.hpp"
#include "pipeline/mbuf_fifo.hpp"
#include "pipeline/timer_heap.hpp"
#include "retransmit/rto_estimator.hpp"
#include "softmax/selector.hpp"
#include "tables/path_table.hpp"
#include "tables/shared_tables.hpp"
#include "wire/ack_run.hpp"
#include "wire/auth.hpp"
#include "wire/header_writer.hpp"
#include "wire/mbuf_encap.hpp"
#include "wire/parse.hpp"

#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <span>
#include <vector>

namespace laps::pipeline {

using common::time_ns;

class send_side {
public:
    // What it shares with its engine; all outlive it. The configuration is
    // the engine's own copy: the console's settings (set cc, increase
    // stages) change it in place.
    struct engine_parts {
        engine_config& config;
        tables::shared_tables& tables;
        engine_counters& counters;
        mbuf_fifo& to_fabric;
        wire::authenticator* signer; // null: packets go unsigned
    };
    // `slots`: its flow table (its own rte_hash, or its share of a shared index).
    send_side(const engine_parts& parts, flow_slots slots, std::pmr::memory_resource* memory);
    send_side(const send_side&) = delete;
    send_side& operator=(const send_side&) = delete;

    // engine::from_host and engine::from_host_behind.
    std::uint16_t from_host(rte_mbuf** frames, std::uint16_t count, time_ns now) noexcept
    {
        ++_host_call; // a new mark for the flows that refuse a frame in this call
        return take_host(frames, count, now);
    }
    std::uint16_t from_host_behind(rte_mbuf** frames, std::uint16_t count, time_ns now) noexcept
    {
        return take_host(frames, count, now);
    }
    // Answers to its DATA and PROBEs, from the fabric (ack_path.cpp).
    void on_ack(const wire::parsed_packet& p, time_ns now) noexcept;
    void on_ack_run(const rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept;
    void on_probe_ack(const wire::parsed_packet& p, time_ns now) noexcept;
    // A CREDIT from the receiver of a receiver-paced flow (ack_path.cpp).
    void on_credit(const wire::parsed_packet& p) noexcept;
    // The fabric burst is over: the frames its ACKs released are freed, and
    // what they let go (a window opened, losses found) is sent.
    void end_burst(time_ns now) noexcept
    {
        _released_frames.flush();
        transmit(now, _config.poll_budget);
    }
    // Timers and paced sends due by `now`, and idle flows removed.
    void poll(time_ns now) noexcept;
    // engine::next_event.
    time_ns next_event(time_ns now) const noexcept;
    // Frees queued and in-flight frames, counted in stop_free_queued and
    // stop_free_in_flight.
    void release_all() noexcept;

    // Control (engine.hpp says when each is called).
    void prepare_set(std::uint32_t set)
    {
        _selector.prepare(set);
        if (set >= _minimums.size()) {
            _minimums.resize(set + 1);
        }
        _minimums[set] = tables::set_minimum{};
    }
    void reset_path_counters(tables::path_id pid) noexcept;
    std::uint32_t tear_down_set(std::uint32_t set) noexcept;
    // Flows keep their rates; the next ACK of each runs the new variant.
    void set_cc_variant(congestion::cc_variant v) noexcept
    {
        _config.algo.congestion.aimd.variant = v;
        _coupled = !_path_rates.empty() && v == congestion::cc_variant::fair;
        // Per-path rates start again from each flow's rate at its next ACK.
        for (auto& r : _path_rates) {
            r.start(0, 0.0);
        }
        // The backoffs are counted another way now (backoff_of): timeouts
        // start again from the estimates.
        for (auto& f : _flows) {
            f.backoff = 0;
            f.path_backoff = {};
        }
    }
    void set_beta(const softmax::beta_params& beta) noexcept { _selector.set_beta(beta); }
    void set_policy(softmax::policy p) noexcept
    {
        _selector.set_policy(p);
        _other_policy = p == softmax::policy::reps || p == softmax::policy::selective || softmax::pins_flows(p);
    }
    const softmax::selector_params& selection() const noexcept { return _selector.params(); }

    const std::array<std::uint64_t, wire::encap_error_count>& encap_errors() const noexcept { return _encap_errors; }
    // Per pid: DATA packets sent on it (first sends and resends).
    std::span<const std::uint64_t> packets_per_path() const noexcept { return _packets_per_path; }
    // Per pid: the rest of what `show paths stats` reports.
    struct path_counters {
        std::uint64_t bytes = 0;  // host-frame bytes of the DATA packets sent on it
        std::uint64_t probes = 0; // PROBEs sent on it (Alg. 1)
        std::uint64_t losses = 0; // its packets found lost, by gap or timeout (Alg. 3)
        // Latencies recorded for it (clock offset removed) and the smallest:
        // a baseVal below every measurement is a wrong config (app
        // tables.calibrate_base).
        std::uint64_t latency_samples = 0;
        std::int64_t latency_min_ns = std::numeric_limits<std::int64_t>::max();
    };
    std::span<const path_counters> path_stats() const noexcept { return _path_stats; }

    // One active sender flow, for `show flows` and telemetry.
    struct flow_view {
        std::uint32_t flow_id;
        const wire::flow_key* key;
        std::uint32_t set;
        double rate_bps;
        double expected_bps;
        std::uint32_t in_flight;
        std::uint32_t queued;
        std::uint32_t lost_pending;
        time_ns last_active;
    };
    // Calls `visit(const flow_view&)` for up to `max` active flows, by slot.
    template <typename F>
    void for_each_flow(std::uint32_t max, F&& visit) const
    {
        std::uint32_t seen = 0;
        for (std::uint32_t i = 0; i < _flows.size() && seen < max; ++i) {
            const auto& f = _flows[i];
            if (!f.active) {
                continue;
            }
            ++seen;
            visit(flow_view{_flow_ids.make(i, f.generation), &f.key, f.set, f.rate.rate_bps(), f.rate.expected_bps(),
                            f.window.in_window(), f.queue.size(), f.window.lost_pending(), f.last_active});
        }
    }
    std::uint32_t active_flows() const noexcept { return _active_flows; }
    // engine::room_for_refused. from_host refuses only frames of flows whose
    // queue is full: a frame leaving the queue of a flow that refused makes
    // room for one (`freed`); a flow that stalls or goes takes (drops) all
    // of its frames at once (`changes`).
    struct host_room {
        std::uint64_t freed = 0;
        std::uint64_t changes = 0;
    };
    host_room room_for_refused() const noexcept { return _host_room; }
    // Host frames taken but not yet acknowledged: queued, in flight, or lost
    // and waiting for a resend. A shell stopping cleanly drains until 0.
    // Scans every flow slot: for the control path, not per packet.
    std::uint64_t unfinished_frames() const noexcept;

private:
    // Frames classified and looked up together (<= RTE_HASH_LOOKUP_BULK_MAX).
    static constexpr std::uint16_t host_lookup_burst = 32;
    // A flow with this many path timeouts in a row without an ACK releasing
    // anything is stalled: when its queue is full its new frames are dropped
    // (host_drop_flow_stalled) instead of holding the host port.
    static constexpr std::uint8_t stalled_timeouts = 3;
    // Doublings of a path timeout at most (the cap, max_timeout, usually binds first).
    static constexpr std::uint8_t max_backoff = 16;
    // from_host without a new mark: a flow that refused in the last call
    // refuses again, whatever its room.
    std::uint16_t take_host(rte_mbuf** frames, std::uint16_t count, time_ns now) noexcept;
    // Frames not taken are appended to left_out[left++].
    void take_host_burst(rte_mbuf* const* frames, std::uint16_t count, rte_mbuf** left_out, std::uint16_t& left,
                         time_ns now) noexcept;
    void pass_or_drop(rte_mbuf* m, bool pass, std::uint64_t& passed, std::uint64_t& dropped) noexcept;
    // `hash`: wire::key_hash of the key (the flow table's own hash).
    // The slot the exact-match cache proposes for the key, if it holds that
    // live flow; -1 otherwise.
    std::int32_t cached_flow(const wire::flow_key& key, std::uint32_t hash) const noexcept;
    // The cache, then rte_hash (whose answer the cache remembers).
    send_flow* find_flow(const wire::flow_key& key, std::uint32_t hash) noexcept;
    send_flow* create_flow(const wire::classification& c, std::uint32_t hash, std::uint32_t set, time_ns now) noexcept;
    // Puts back at the head of the ready list the flow transmit() just took
    // from it (the port was busy): it goes first when the port frees.
    void keep_turn(std::uint32_t index) noexcept;
    void make_ready(std::uint32_t index) noexcept;
    // Whether a flow whose queue just got its first frame may send it at
    // once (take_host_burst), bypassing the ready list.
    bool may_send_now(const send_flow& f, time_ns now) const noexcept;
    // The fair variant with a rate per path (congestion.fair.coupled_paths;
    // its state exists only when the config asks for it: the console can
    // switch the variant, not this).
    bool coupled_paths() const noexcept { return _coupled; }
    // Bit per slot of set `set`: its path is usable (valid).
    std::uint32_t usable_slots(std::uint32_t set) const noexcept;
    // Coupled paths: flow `index`'s path rates, started (evenly, at the
    // flow's rate) if the flow began under another variant.
    congestion::coupled_rates& path_rates(std::uint32_t index) noexcept;
    // Coupled paths: the set's slot for flow `index`'s next packet, -1 if none.
    int coupled_slot(std::uint32_t index) noexcept;
    // Coupled paths: the flow's rate is the sum of its usable paths'.
    void apply_path_rates(std::uint32_t index) noexcept;
    // Coupled paths: an ACK on path `pid` acts on that path's rate, with
    // that path's queue (out of line: the other variants' ACKs skip it).
    [[gnu::noinline]] congestion::aimd_action coupled_on_ack(std::uint32_t index, tables::path_id pid,
                                                             time_ns now) noexcept;
    void transmit(time_ns now, std::uint32_t budget) noexcept;
    // Receiver-paced credits (sender.cpp): whether flow `index` may send new
    // DATA now, and what a new DATA spends (true: it asks for a credit).
    // Out of line: the other variants' send path stays as small as it was.
    [[gnu::noinline]] bool credit_allows(std::uint32_t index, time_ns now) noexcept;
    [[gnu::noinline]] bool spend_credit(send_flow& f, std::uint32_t frame_bytes, retransmit::seq_t seq,
                                        bool resend) noexcept;
    enum class send_result : std::uint8_t { sent, waits, port_busy };
    send_result send_one(std::uint32_t index, time_ns now) noexcept;
    void send_probe(tables::path_id pid, const send_flow& f, time_ns now) noexcept;
    // The other seeds' policies (pipeline/policies.cpp): the packet's path,
    // and what an ACK tells them (before and after its latency sample).
    softmax::choice other_policy_choice(send_flow& f, time_ns now) noexcept;
    void start_flow_policy(send_flow& f, std::uint8_t dscp) noexcept;
    void policy_on_ack(send_flow& f, std::uint8_t slot, bool ecn_marked, time_ns rtt_ns, time_ns now) noexcept;
    void policy_on_sample(send_flow& f, std::uint8_t slot, time_ns now) noexcept;
    void policy_on_timeout(send_flow& f, std::uint8_t slot, time_ns now) noexcept;
    policy::hopper_config hopper_config_for(const send_flow& f) const noexcept;
    void arm_path_timer(std::uint32_t index, std::uint8_t slot, time_ns now) noexcept;
    void schedule(std::uint32_t index, timer_kind kind, std::uint8_t slot, time_ns at) noexcept;
    void run_timers(time_ns now) noexcept;
    void age_flows(time_ns now) noexcept;
    void evict(std::uint32_t index) noexcept;
    void tear_down(std::uint32_t index) noexcept;
    // Alg. 3's 2 x realVal, or the path's measured round trip plus four
    // deviations when larger (retransmit/rto_estimator.hpp), doubled per
    // timeout in a row without progress (`backoff`) up to max_timeout.
    time_ns path_timeout(tables::path_id pid, std::uint8_t backoff) const noexcept;
    // The doublings that path slot `slot`'s timeouts of flow `f` take: the
    // flow's (RFC 6298 §5.5, one timer per flow) or, under receiver-paced
    // credits, the path's own (as MPTCP's subflows each back off): a flow
    // there sends where its credits point, so the other paths' losses of a
    // burst are found by their timeouts one by one, and counted for the
    // flow they would stretch every path's timeout 2^paths-fold
    // (docs/congestion.md "Receiver-paced credits", item 8).
    std::uint8_t& backoff_of(send_flow& f, std::uint8_t slot) const noexcept
    {
        return _config.algo.congestion.aimd.variant == congestion::cc_variant::credit ? f.path_backoff[slot]
                                                                                   : f.backoff;
    }
    // The UDP source port's 14 entropy bits: a per-(flow, path) hash above
    // the flow's steering tag.
    std::uint16_t entropy(std::uint32_t flow_id, tables::path_id pid, std::uint16_t tag) const noexcept;
    // A new flow's tag: t % workers == worker, spread over the tag space.
    std::uint16_t steering_tag(std::uint32_t flow_hash) const noexcept;

    // The answers (ack_path.cpp).
    static constexpr std::uint32_t no_flow = std::numeric_limits<std::uint32_t>::max();
    // The flow slot an ACK or ACK_RUN answers (its pid, epoch, flow and
    // destination checked), or no_flow after counting `answers` drops.
    // Inlined (as on_ack was whole): called on every ACK.
    [[gnu::always_inline]] std::uint32_t answered_flow(const wire::laps_header& h, std::uint32_t answers) noexcept;
    // The packet that carries answers: an ACK, or an ACK_RUN, whose answers
    // give the round-trip estimate one sample and restart the path's timer
    // once, after the last of them.
    struct answer_packet {
        std::uint32_t bytes = 0;       // its frame length (the clock offset estimate's answer size)
        bool round_trip_taken = false; // an answer gave the round-trip estimate its sample
        bool taken = false;            // an answer matched a transmission in the window
    };
    // One answer to a DATA of flow `index` on path `pid` (Alg. 1-3): the
    // window, round trip, path timer (an ACK's only), sample and rate.
    template <bool coalesced>
    [[gnu::always_inline]] void take_answer(std::uint32_t index, tables::path_id pid, const wire::answer_fields& a,
                                            answer_packet& from, time_ns now) noexcept;
    // The sample of an ACK or PROBE_ACK: PIT (realVal, time) through the
    // clock offset estimate; false (nothing written, counted) when the
    // latency is implausible.
    // `rtt_ns`: the answered packet's round trip (< 0: unknown);
    // `answer_bytes`: the ACK's length.
    bool record_sample(tables::path_id pid, std::int64_t latency_ns, std::uint16_t acked_bytes, time_ns now,
                       time_ns rtt_ns = -1, std::uint32_t answer_bytes = 0) noexcept;

    void stage_to_fabric(rte_mbuf* m) noexcept { _to_fabric.push_or_free(m, _counters.to_fabric_drop_full); }
    // Signs a packet whose headers start its first segment, with `anchors` anchors.
    void sign(rte_mbuf* m, std::size_t anchors) noexcept
    {
        if (_signer != nullptr) {
            _signer->sign(rte_pktmbuf_mtod(m, std::uint8_t*), wire::laps_size(anchors));
        }
    }

    // Members by use (docs/PERFORMANCE.md §19): a host of the testbed, or a
    // worker with many flows, finds its engine out of cache at every packet,
    // and each line a packet touches here is a miss of its own, taken one
    // after another. The engine's parts and what every DATA and ACK reads
    // come first; what a console reads comes last.
    engine_config& _config;
    tables::shared_tables& _tables;
    tables::path_table& _table;
    engine_counters& _counters;
    mbuf_fifo& _to_fabric;
    wire::authenticator* _signer;
    std::uint32_t _burst_bytes;
    // What a DATA adds to its host frame at most, for the pacers: 86, or 106 signed.
    std::uint32_t _wire_overhead = 0;
    flow_id_layout _flow_ids;
    std::uint16_t _tag_mask = 0;
    bool _coupled = false;      // _path_rates in use: coupled_paths configured and cc fair
    bool _other_policy = false; // a policy of pipeline/policies.cpp chooses paths
    std::uint32_t _ready_head = 0;
    std::uint32_t _ready_count = 0;
    std::uint32_t _active_flows = 0;
    std::uint32_t _aging_hand = 0;
    std::uint32_t _host_call = 0; // from_host calls, to mark the flows that refused a frame in one
    host_room _host_room; // room_for_refused()
    std::uint32_t _probe_seq = 1; // never 0: 0 marks no probe outstanding
    time_ns _port_busy_until = 0; // port_rate_bps: no send before this
    congestion::pacer _port_pacer;
    congestion::pace_rate _port_rate; // port_rate_bps for the port pacer

    std::pmr::vector<send_flow> _flows;
    std::pmr::vector<std::uint32_t> _ready_storage;
    timer_heap _timers;
    // Per pid, from _memory (the worker's socket in the app).
    std::pmr::vector<std::uint64_t> _packets_per_path;
    std::pmr::vector<path_counters> _path_stats;
    // Per pid: this engine's round trips on it (path_timeout).
    std::pmr::vector<retransmit::rto_estimator> _round_trips;
    std::pmr::vector<tables::set_minimum> _minimums; // per set: Alg. 2's t, kept up to date
    std::pmr::vector<congestion::coupled_rates> _path_rates; // per flow slot; empty unless coupled_paths
    softmax::selector _selector;
    // DATA and PROBE headers from templates: its own copy, not a reference
    // to the engine's, read without a reload after each header byte written.
    const wire::header_writer _headers;
    flow_cache _flow_cache; // in front of _flow_slots: hash -> slot
    flow_slots _flow_slots;
    // Host frames that ACKs released during one fabric burst, freed at its end.
    free_batch _released_frames;
    std::pmr::vector<rte_mbuf*> _flow_queue_storage;
    // Per pid: the probe sequence (+1) of the probe outstanding on it; a
    // PROBE_ACK is taken only for that one (0: none outstanding).
    std::pmr::vector<std::uint32_t> _probe_outstanding;
    common::rng _policy_rng{1}; // their random choices (Hopper's probes, FlowBender's moves)
    std::array<std::uint64_t, wire::encap_error_count> _encap_errors{};
};

} // namespace laps::pipeline
