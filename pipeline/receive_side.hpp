#pragma once
// The receive side of an engine (docs/pipeline.md "Two sides"): DATA
// from the fabric is answered on its reversed path (an ACK per DATA, or one
// ACK_RUN per (flow, path) of a receive burst), kept from the host when it
// is a duplicate, decapsulated and handed over once, in sequence when the
// config asks for order (reorder buffer, gap timeouts). PROBEs are answered
// here too. Receive flows are keyed by (sender, flow_id, epoch) and aged
// out when idle or when the table is full.
//
// The engine owns it and hands it the packets parse() and authentication
// accepted (pipeline/engine.hpp); it shares the engine's configuration,
// counters, signer and staging queues. Everything is
// allocated in the constructor; the data-path calls are noexcept and
// allocate nothing.

#include "pipeline/aging.hpp"
#include "pipeline/counters.hpp"
#include "pipeline/engine_config.hpp"
#include "pipeline/flow_slots.hpp"
#include "pipeline/flow_state.hpp"
#include "pipeline/mbuf_fifo.hpp"
#include "pipeline/rx_timestamp.hpp"
#include "pipeline/timer_heap.hpp"
#include "wire/auth.hpp"
#include "wire/header_writer.hpp"
#include "wire/parse.hpp"

#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <memory_resource>
#include <optional>

namespace laps::pipeline {

using common::time_ns;

class receive_side {
public:
    // What it shares with its engine; all outlive it.
    struct engine_parts {
        const engine_config& config;
        engine_counters& counters;
        mbuf_fifo& to_host;
        mbuf_fifo& to_fabric;
        wire::authenticator* signer; // null: packets go unsigned
    };
    // Receive flows kept at once: receive_flow_capacity, else as many as send flows.
    static std::uint32_t capacity_for(const engine_config& config) noexcept;
    // `slots`: its flow table of capacity_for(config) flows (its own
    // rte_hash, or its share of a shared index).
    receive_side(const engine_parts& parts, flow_slots slots, std::pmr::memory_resource* memory);
    receive_side(const receive_side&) = delete;
    receive_side& operator=(const receive_side&) = delete;

    // A DATA packet (owns `m`): answered, filtered, delivered or held.
    void on_data(rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept;
    // A PROBE: answered at once with its PROBE_ACK.
    void on_probe(const rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept;
    // Receiver-paced credits: a packet that is not DATA (a probe, an answer,
    // a credit) took `bytes` of the port it came in through, which that
    // port's credits leave to it on a lossy fabric: its next turn comes that
    // much later (docs/congestion.md "Receiver-paced credits", item 3).
    void charge_port(const rte_mbuf* m, std::uint32_t bytes) noexcept
    {
        if (_credits_owed != 0 && _charge_other_arrivals) [[unlikely]] {
            charge_credit_pacer(m, bytes);
        }
    }
    // The receive burst is over: the coalesced answers leave, and the
    // credits due.
    void end_burst(time_ns now) noexcept
    {
        if (_open_runs != 0) {
            send_answers();
        }
        if (_credits_owed != 0) {
            grant_credits(now);
        }
    }
    // Gap timeouts due by `now`, credits due, and idle flows forgotten.
    void poll(time_ns now) noexcept;
    // When poll() next has work: the reorder timers' top, which may be early
    // (an entry whose gap was filled and a newer one started is put right
    // only when it comes due: a poll that finds nothing to do, never a late
    // one), or the next credit's turn; time_ns max when nothing waits.
    time_ns next_event(time_ns now) const noexcept
    {
        const time_ns gap = _reorder_timers.next_due(now);
        return _credits_owed == 0 ? gap : std::min(gap, next_credit(now));
    }
    // Frees the frames held for order, counted in stop_free_held.
    void release_all() noexcept;

    std::uint32_t active_flows() const noexcept { return _active_flows; }
    // Reorder-buffer occupancy seen at each DATA arrival (Fig. 20):
    // histogram by frames held, last bucket = that many or more.
    static constexpr std::size_t reorder_histogram_size = 65;
    const std::array<std::uint64_t, reorder_histogram_size>& reorder_histogram() const noexcept
    {
        return _reorder_histogram;
    }
    // Frames held in reorder buffers right now, over all flows.
    std::uint64_t reorder_held() const noexcept { return _reorder_held; }

private:
    // The packet's flow, created if new; null when the table is full or
    // (`bad_offset`) a new flow's window_offset is beyond the duplicate window.
    receive_flow* flow_for(const wire::parsed_packet& p, time_ns now, bool& bad_offset) noexcept;
    void age_flows(time_ns now) noexcept;
    // The table is full: frees the slot of the longest-quiet flow among the
    // next few, if it has been quiet for flow_idle. True if one was freed.
    bool reclaim_flow(time_ns now) noexcept;
    void forget_flow(std::uint32_t index) noexcept;
    // In order: hands a flow's in-sequence frames to the host; if frames are
    // still held behind a gap, makes sure its reorder timeout is pending.
    void release_in_order(std::uint32_t index, time_ns now) noexcept;
    // A frame the reorder buffer held, now in order: to the host.
    void deliver_held(std::uint64_t handle) noexcept;
    // Moves a flow past what its sender had acknowledged before
    // (docs/pipeline.md "Receiver guarantees").
    void skip_acknowledged_gap(std::uint32_t index, std::uint32_t acked_before, time_ns now) noexcept;
    // Gives up waiting for a flow's gap (reorder timeout, hold limit, new
    // incarnation): held frames are delivered in sequence past the gap, or
    // dropped when the timeout action says so and `by_timeout`.
    void give_up_gap(std::uint32_t index, bool by_timeout) noexcept;
    // Over reorder_hold_max: the flow that has held frames longest gives up its gap.
    void give_up_oldest_gap() noexcept;
    // The flow whose gap has waited longest, if its wait is due by `until`
    // (the reorder timers' top after stale entries are put right); -1 if none.
    std::int64_t pop_waiting_flow(time_ns until) noexcept;
    void run_reorder_timers(time_ns now) noexcept;
    // Receiver-paced credits (pipeline/credits.cpp): a DATA that asks for a
    // credit puts its flow in the pacer of each port it has a route on; a
    // port's turn goes to the flow granted least so far, and lasts as long
    // as the DATA it calls takes on the port at rate_fraction of its rate.
    void owe_credit(std::uint32_t index, const rte_mbuf* m, const wire::parsed_packet& p, time_ns now) noexcept;
    void grant_credits(time_ns now) noexcept;
    void charge_credit_pacer(const rte_mbuf* m, std::uint32_t bytes) noexcept;
    // The earliest turn of a port with flows owed credits (not before `now`).
    time_ns next_credit(time_ns now) const noexcept;
    void deliver(rte_mbuf* frame) noexcept;
    void stage_to_fabric(rte_mbuf* m) noexcept { _to_fabric.push_or_free(m, _counters.to_fabric_drop_full); }
    void stage_to_host(rte_mbuf* m) noexcept { _to_host.push_or_free(m, _counters.to_host_drop_full); }
    // Signs an answer whose headers start its first segment (LAPS header
    // of `laps_bytes`, an ACK_RUN's run block included).
    void sign_laps(rte_mbuf* m, std::size_t laps_bytes) noexcept
    {
        if (_signer != nullptr) {
            _signer->sign(rte_pktmbuf_mtod(m, std::uint8_t*), laps_bytes);
        }
    }

    // Coalescing (config acks, pipeline/ack_coalescing.cpp): the runs of
    // answers open in this receive burst, in the order they opened. A run is
    // one (flow, path)'s DATA, answered in place in one control mbuf: the
    // ACK of its first DATA, then an entry per DATA that joins;
    // finish_run() makes it an ACK_RUN (or leaves the ACK of a run of one as
    // it is), signs and stages it. What a second DATA needs is worked out
    // when one comes: most runs (interleaved flows) stay at one.
    struct answer_run {
        rte_mbuf* m = nullptr;
        std::uint32_t flow = 0; // receive flow slot; no_slot once forgotten
        tables::path_id pid = 0;
        std::uint8_t anchors = 0;
        std::uint32_t count = 0; // entries after the first DATA's answer
        std::uint32_t limit = 0; // entries the mbuf has room for (once count > 0)
        std::uint32_t ecn_echo_bits = 0;
        std::int64_t base_latency = 0; // the fixed header's latency (once count > 0)
    };
    static constexpr std::uint32_t max_open_runs = 16;
    // (flow, pid) -> its open run + 1 (0: none), direct-mapped: a DATA finds
    // its run without a scan. A collision only opens a second run of the
    // same (flow, path), sent after the first: the order holds.
    static constexpr std::uint32_t run_index_bits = 6;
    static constexpr std::uint32_t run_index_of(std::uint32_t flow, tables::path_id pid) noexcept
    {
        return ((flow * 8u + pid) * 0x9E3779B1u) >> (32 - run_index_bits);
    }
    // The answer to a DATA joins the open run of its (flow, path) or opens one.
    void answer_in_run(const wire::parsed_packet& p, std::uint32_t flow, time_ns now) noexcept;
    // Opens a run with `p`'s ACK; false (counted) when no mbuf is left.
    bool open_run(answer_run& run, const wire::parsed_packet& p, std::uint32_t flow, time_ns now) noexcept;
    void finish_run(answer_run& run) noexcept;
    void send_answers() noexcept;

    // What every DATA reads first (docs/PERFORMANCE.md §19): the engine's
    // parts, the last DATA's flow (tried before the table), the window.
    const engine_config& _config;
    engine_counters& _counters;
    mbuf_fifo& _to_host;
    mbuf_fifo& _to_fabric;
    wire::authenticator* _signer;
    std::uint32_t _last_slot = no_slot;
    std::uint32_t _window = 0; // the duplicate window: a new flow's window_offset must be below it
    std::uint32_t _tag = 0;    // receive_key::owner: flow_index_tag
    std::uint32_t _active_flows = 0;
    std::uint32_t _open_runs = 0;
    std::uint32_t _aging_hand = 0;
    receive_key _last_key;
    std::uint64_t _reorder_held = 0;
    std::pmr::vector<receive_flow> _flows;
    std::unique_ptr<std::array<answer_run, max_open_runs>> _runs; // null: acks per_packet
    std::optional<rx_timestamp> _rx_time;                         // config rx_timestamps
    timer_heap _reorder_timers; // one entry at most per flow
    const wire::header_writer _headers; // ACK and PROBE_ACK headers: its own copy (send_side.hpp)
    std::pmr::vector<receive_key> _keys;
    flow_slots _slots;
    std::array<std::uint8_t, 1u << run_index_bits> _run_index{};
    // Per receiving port: the flows owed credits that it can send one, by
    // the credits each had granted when it was queued (a min-heap; a key
    // that grew since, by a turn on another port, is put right when it comes
    // up), the order they were queued in among equals; and the next turn's
    // time. _credits_owed: entries in the pacers, all ports.
    struct credit_turn {
        std::uint32_t granted = 0;
        std::uint32_t order = 0;
        std::uint32_t flow = 0;
        // Later in the heap: more granted, or queued later among equals.
        bool operator>(const credit_turn& o) const noexcept
        {
            return granted != o.granted ? static_cast<std::int32_t>(granted - o.granted) > 0
                                        : static_cast<std::int32_t>(order - o.order) > 0;
        }
    };
    struct credit_pacer {
        std::pmr::vector<credit_turn> queue;
        std::uint32_t order = 0;
        time_ns next_at = 0;
        std::uint32_t count() const noexcept { return static_cast<std::uint32_t>(queue.size()); }
    };
    void queue_turn(std::uint32_t port, std::uint32_t index) noexcept;
    std::array<credit_pacer, congestion::max_credit_ports> _credit_pacers;
    std::uint32_t _credit_ports = 1;
    std::uint32_t _credits_owed = 0;
    double _credit_ns_per_byte = 0; // per port
    bool _charge_other_arrivals = true; // credit.lossless_fabric not set
    std::array<std::uint64_t, reorder_histogram_size> _reorder_histogram{};
};

} // namespace laps::pipeline
