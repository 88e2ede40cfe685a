#pragma once
// The LAPS engine of one host shard: sender and receiver on mbuf bursts.
//
//   host frames --from_host()--> classify, PST, flow queue --> pace, select
//   path (Eq. 1, Alg. 1), encapsulate, keep for resend (Alg. 3) --> to_fabric
//
//   fabric packets --from_fabric()--> DATA: ACK back on the reversed anchors,
//   drop duplicates, decapsulate, optionally reorder --> to_host
//                                     ACK: PIT, AIMD (Alg. 2), loss (Alg. 3)
//                                     PROBE: answer; PROBE_ACK: PIT
//
// The engine is a thin owner of its two sides, each a class of its own
// (docs/pipeline.md "Two sides"): the send side (pipeline/send_side.hpp:
// host frames, flows, pacing, selection, encapsulation, window, timers and
// the answers to its DATA) and the receive side (pipeline/receive_side.hpp:
// DATA and PROBEs), each with its own header templates. It keeps what both
// share: configuration, tables, counters, signer and staging, and the
// fabric's input (parse, authentication, dispatch: fabric_input.cpp).
//
//   poll(): pacer releases, path timeouts, retries, idle-flow aging.
//
// No port I/O and no clock: the caller passes `now` (ns) and drains the
// outputs with take_to_fabric()/take_to_host() after every call. The app runs
// one engine per worker lcore, all reading and updating their instance's
// shared tables (PST, PIT, path sets: tables/shared_tables.hpp) while each
// owns its flows; the testbed runs one per emulated host in virtual time,
// each with tables of its own. Everything is allocated in the constructor;
// the data-path calls are noexcept and allocate nothing.
//
// mbuf ownership: from_host() takes ownership of the frames it consumes (its
// return value); from_fabric() of all it is given; take_*() hands ownership to
// the caller. The destructor frees every mbuf the engine still holds.

#include "pipeline/counters.hpp"
#include "pipeline/engine_config.hpp"
#include "pipeline/flow_slots.hpp"
#include "pipeline/free_batch.hpp"
#include "pipeline/mbuf_fifo.hpp"
#include "pipeline/receive_side.hpp"
#include "pipeline/send_side.hpp"
#include "softmax/selector.hpp"
#include "tables/path_table.hpp"
#include "tables/shared_tables.hpp"
#include "wire/auth.hpp"
#include "wire/parse.hpp"
#include "wire/replay_window.hpp"

#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <memory_resource>
#include <span>
#include <stdexcept>
#include <vector>

struct rte_hash;

namespace laps::pipeline {

using common::time_ns;

class engine_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class engine {
public:
    // Tables of its own, built from config.algo.paths; this engine is their
    // only user. Throws engine_error (or tables::table_error) naming what is wrong.
    explicit engine(const engine_config& config);
    // The instance's tables, shared with the other workers' engines
    // (config.algo.paths is not read); `shared` must outlive the engine.
    engine(const engine_config& config, tables::shared_tables& shared);
    ~engine();
    engine(const engine&) = delete;
    engine& operator=(const engine&) = delete;

    // Takes the host frames it can and returns how many. A frame whose flow's
    // queue is full is not taken, nor any later frame of that flow in this
    // call (the flow's order holds), while the other flows' frames are
    // (backpressure stops only the flows it must). The frames not taken are
    // moved to the front of `frames`, in their order, to be offered again.
    std::uint16_t from_host(rte_mbuf** frames, std::uint16_t count, time_ns now) noexcept
    {
        return _sender.from_host(frames, count, now);
    }
    // Frames that arrived behind the ones from_host refused in its last
    // call, which the caller still holds: a flow that refused then refuses
    // these too, whatever its room now (its order holds); the other flows
    // take theirs. What it refuses goes to the front of `frames`, as with
    // from_host. The caller saves classifying its refused frames again
    // until their flows have made room (room_for_refused, app/run/worker.cpp).
    std::uint16_t from_host_behind(rte_mbuf** frames, std::uint16_t count, time_ns now) noexcept
    {
        return _sender.from_host_behind(frames, count, now);
    }
    // What the frames from_host refused wait for, as running counts: frames
    // that left the queues of the flows that refused since its last call
    // (`freed`: room for as many), and events after which it takes or drops
    // all of a flow's frames at once (`changes`: the flow stalled or went).
    using host_room = send_side::host_room;
    host_room room_for_refused() const noexcept { return _sender.room_for_refused(); }

    // Takes every packet.
    void from_fabric(rte_mbuf* const* packets, std::uint16_t count, time_ns now) noexcept;

    // Timers and paced sends due by `now`.
    void poll(time_ns now) noexcept;

    // When poll() next has work: `now` if flows are ready, the earliest timer
    // of either side otherwise (path, pace and retry timers; gap timeouts),
    // or time_ns max when idle. For virtual-time callers.
    time_ns next_event(time_ns now) const noexcept
    {
        return std::min(_sender.next_event(now), _receiver.next_event(now));
    }

    std::uint16_t take_to_fabric(rte_mbuf** out, std::uint16_t max) noexcept { return _to_fabric.take(out, max); }
    std::uint16_t take_to_host(rte_mbuf** out, std::uint16_t max) noexcept { return _to_host.take(out, max); }
    std::uint32_t pending_to_fabric() const noexcept { return _to_fabric.size(); }
    std::uint32_t pending_to_host() const noexcept { return _to_host.size(); }

    // Control plane of an engine with tables of its own (same thread as the
    // data path, between bursts); with shared tables the app edits the
    // instance's tables and calls the per-worker parts below on every worker.
    // Table edits throw tables::table_error or engine_error naming the
    // problem and change nothing when they do.
    void set_path_valid(tables::path_id pid, bool valid) noexcept;
    void add_path(const tables::pit_row& row);
    void remove_path(tables::path_id pid);
    // fabric_ipv4 0: the destination itself (IPv4).
    void add_destination(const tables::address& destination, std::span<const tables::path_id> pids,
                         std::uint32_t fabric_ipv4 = 0);
    // The destination's flows are torn down (their frames freed, counted).
    void remove_destination(const tables::address& destination);

    // Per-worker parts of control edits on shared tables (on the worker's own
    // thread, between bursts). A new set index: a fresh selection cache (may
    // allocate). A pid (re)added: its counters start from 0. A destination
    // deleted: this engine's flows of its set are torn down; returns how many.
    void prepare_set(std::uint32_t set) { _sender.prepare_set(set); }
    void reset_path_counters(tables::path_id pid) noexcept { _sender.reset_path_counters(pid); }
    std::uint32_t tear_down_set(std::uint32_t set) noexcept { return _sender.tear_down_set(set); }
    bool owns_tables() const noexcept { return _own_tables != nullptr; }
    void set_increase_stages(std::uint32_t n) noexcept { _config.algo.congestion.aimd.increase_stages = n; }
    // Flows keep their rates; the next ACK of each runs the new variant.
    void set_cc_variant(congestion::cc_variant v) noexcept { _sender.set_cc_variant(v); }
    void set_beta(const softmax::beta_params& beta) noexcept { _sender.set_beta(beta); }
    void set_policy(softmax::policy p) noexcept { _sender.set_policy(p); }
    const softmax::selector_params& selection() const noexcept { return _sender.selection(); }

    // Read-only views for stats, console and tests.
    const engine_counters& counters() const noexcept { return _counters; }
    const std::array<std::uint64_t, wire::parse_error_count>& parse_errors() const noexcept { return _parse_errors; }
    const std::array<std::uint64_t, wire::encap_error_count>& encap_errors() const noexcept { return _sender.encap_errors(); }
    const tables::path_table& paths() const noexcept { return _table; }
    const tables::pst& pst() const noexcept { return _tables.destinations(); }
    const tables::shared_tables& tables() const noexcept { return _tables; }
    // The outer destination address of a path set's host.
    std::uint32_t fabric_ipv4_of(std::uint32_t set) const noexcept
    {
        return set < _table.set_count() ? _table.set(set).fabric_ipv4 : 0;
    }
    // Per pid: DATA packets sent on it (first sends and resends).
    std::span<const std::uint64_t> packets_per_path() const noexcept { return _sender.packets_per_path(); }
    // Per pid: the rest of what `show paths stats` reports.
    using path_counters = send_side::path_counters;
    std::span<const path_counters> path_stats() const noexcept { return _sender.path_stats(); }
    // One active sender flow, for `show flows` and telemetry.
    using flow_view = send_side::flow_view;
    // Calls `visit(const flow_view&)` for up to `max` active flows, by slot.
    template <typename F>
    void for_each_flow(std::uint32_t max, F&& visit) const
    {
        _sender.for_each_flow(max, std::forward<F>(visit));
    }
    std::uint32_t active_flows() const noexcept { return _sender.active_flows(); }
    // Host frames taken but not yet acknowledged: queued, in flight, or lost
    // and waiting for a resend. A shell stopping cleanly drains until 0.
    // Scans every flow slot: for the control path, not per packet.
    std::uint64_t unfinished_frames() const noexcept { return _sender.unfinished_frames(); }
    std::uint32_t active_receive_flows() const noexcept { return _receiver.active_flows(); }
    const engine_config& config() const noexcept { return _config; }
    // Reorder-buffer occupancy seen at each DATA arrival (Fig. 20):
    // histogram by frames held, last bucket = that many or more.
    static constexpr std::size_t reorder_histogram_size = receive_side::reorder_histogram_size;
    const std::array<std::uint64_t, reorder_histogram_size>& reorder_histogram() const noexcept
    {
        return _receiver.reorder_histogram();
    }
    // Frames held in reorder buffers right now, over all flows.
    std::uint64_t reorder_held() const noexcept { return _receiver.reorder_held(); }

    // Stop: frees every frame the engine still holds, counting each by where
    // it was (stop_free_queued, _in_flight, _held, _staged), so that the
    // shell's report can balance its accounting. The destructor does the same.
    void release_all() noexcept;

private:
    // Delegated to by both public constructors.
    engine(const engine_config& config, std::unique_ptr<tables::shared_tables> own, tables::shared_tables* shared);

    void stage_to_host(rte_mbuf* m) noexcept { _to_host.push_or_free(m, _counters.to_host_drop_full); }

    // Authentication (config auth_key; wire/auth.hpp). Whether a parsed
    // fabric packet carries a valid tag and a counter new to its sender's
    // replay window (dropped and counted by reason when not).
    bool authentic(const rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept;
    // The replay window of sender (address, origin), made if new.
    wire::replay_window* replay_window_of(std::uint32_t src_ip, std::uint32_t origin, time_ns now) noexcept;

    // Authentication: the signer and verifier, and per sender (address,
    // origin) its replay window; all empty without a key.
    struct auth_peer_key {
        std::uint32_t src_ip = 0;
        std::uint32_t origin = 0;
    };
    struct auth_peer {
        bool active = false;
        time_ns last_seen = 0;
        wire::replay_window window;
    };

    // What both sides share first (docs/PERFORMANCE.md §19: the lines a
    // packet touches are misses of their own on a cold engine), then the
    // two sides, then what only authentication and a console read.
    engine_config _config;
    std::pmr::memory_resource* _memory;
    std::unique_ptr<tables::shared_tables> _own_tables; // null: the instance's
    tables::shared_tables& _tables;
    tables::path_table& _table;

    mbuf_fifo _to_fabric;
    mbuf_fifo _to_host;
    engine_counters _counters; // the ones every packet moves in its first two lines, the rest after
    std::pmr::vector<rte_mbuf*> _staging_storage;
    std::unique_ptr<wire::authenticator> _auth;
    // The two sides (after _auth, which signs what they send).
    send_side _sender;
    receive_side _receiver;
    hash_ptr _peer_hash;
    std::pmr::vector<auth_peer> _peers;
    std::pmr::vector<auth_peer_key> _peer_keys;
    std::uint32_t _peer_hand = 0;
    std::array<std::uint64_t, wire::parse_error_count> _parse_errors{};
    // Steering: the worker each source port's tag belongs to (tag % workers,
    // by the port's low byte), to count packets that reached the wrong one
    // (fabric_rx_wrong_worker).
    std::array<std::uint16_t, 256> _worker_of_tag{};
};

} // namespace laps::pipeline
