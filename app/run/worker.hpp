#pragma once
// A worker lcore: run to completion, modelled on DPDK examples/l3fwd.
//
//   loop: now = clock
//         host RX (port queue, or this worker's dispatch ring) -> engine.from_host
//           (frames of a full flow wait in the backlog, ahead of newer
//           ones; host RX goes on while a burst fits behind them, so only
//           a backlog without room holds the port back)
//         fabric RX; clock read right after it -> engine.from_fabric (the
//           arrival time DATA latencies are measured to)
//         engine.poll(now)
//         engine outputs -> rte_eth_tx_buffer (host and fabric TX queue of
//           this worker); the host buffer is flushed when it fills, when an
//           iteration received nothing, and every drain period; the fabric
//           buffer also when its oldest packet has waited run.tx_batch_us.
//           DATA and PROBE get their `time` from the clock immediately
//           before the burst that sends them (wire/stamp.hpp)
//         rte_rcu_qsbr_quiescent: this worker holds nothing of the shared
//           tables between iterations (the control plane's grace periods)
//
// Hot path: noexcept, no allocation, no logging, no syscalls (except
// sched_yield in idle: yield mode when an iteration found no work).

#include "app/run/clock.hpp"
#include "app/config/config.hpp"
#include "app/control/control_channel.hpp"
#include "app/run/counters.hpp"
#include "pipeline/engine.hpp"

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include <atomic>
#include <memory>
#include <span>
#include <vector>

namespace laps::app {

class capture;

// Where a TX buffer's error callback sends what a port refused (host port:
// retried, then counted).
struct tx_retry {
    std::uint64_t* drops = nullptr;
    std::uint64_t* retried = nullptr;
    std::uint16_t port = 0;
    std::uint16_t queue = 0;
};

// Where a worker reads and writes, fixed at start.
struct worker_io {
    std::uint16_t index = 0;   // this worker, 0..workers-1
    std::uint16_t workers = 1;
    std::uint16_t host_port = 0;
    std::uint16_t fabric_port = 0;
    std::uint16_t txq = 0;     // own TX queue on both ports
    // Own RX queue on each port, or -1 when reading a dispatch ring instead.
    std::int32_t host_rxq = 0;
    std::int32_t fabric_rxq = 0;
    rte_ring* host_ring = nullptr;   // own dispatch rings (or null)
    rte_ring* fabric_ring = nullptr;
    // Dispatcher: reads the port's only queue and hands other workers their share.
    bool host_dispatcher = false;
    bool fabric_dispatcher = false;
    std::vector<rte_ring*> host_rings;   // every worker's, by index (dispatcher)
    std::vector<rte_ring*> fabric_rings;
    std::uint16_t udp_port = 0;
    std::uint16_t tag_mask = 0;
};

// How a worker paces its output (app config `run`).
struct worker_timing {
    common::time_ns drain_ns = 0;    // at stop: how long to wait for in-flight packets
    common::time_ns tx_batch_ns = 0; // the longest a fabric packet waits in the TX batch
};

struct tx_buffer_deleter {
    void operator()(rte_eth_dev_tx_buffer* b) const noexcept { rte_free(b); }
};

class worker {
public:
    // Builds the engine on the instance's shared tables (throws
    // pipeline::engine_error) and the TX buffers; registers as reader
    // `io.index` of `rcu` (null: none). Call it on the worker's own lcore:
    // what it allocates on the heap is first touched there.
    worker(const pipeline::engine_config& engine, tables::shared_tables& tables, rte_rcu_qsbr* rcu, worker_io io,
           const clock& clk, std::uint16_t burst, idle_mode idle, const worker_timing& timing,
           std::span<const tables::path_id> tracked_pids, const std::atomic<bool>& stop,
           const std::atomic<bool>& paused, published_stats& published);
    worker(const worker&) = delete;
    worker& operator=(const worker&) = delete;

    // The lcore entry: runs until `stop`, then drains. rte_eal_remote_launch
    // calls it through launch().
    int run() noexcept;
    static int launch(void* self) noexcept { return static_cast<worker*>(self)->run(); }

    // Read only after the lcore has returned.
    const pipeline::engine& engine() const noexcept { return _engine; }

    // Console and telemetry: `w` runs on this worker's engine between bursts
    // (or on the caller's thread when the worker is not running).
    void control(const control_channel::work& w) { _control.run(w, _engine, _published.running); }
    const worker_counters& counters() const noexcept { return _counters; }
    const worker_io& io() const noexcept { return _io; }
    // Live capture (app/control/capture.hpp): set before launch; it outlives the lcore.
    void set_capture(capture* c) noexcept { _capture = c; }

private:
    std::uint16_t receive_host(rte_mbuf** pkts) noexcept;
    std::uint16_t receive_fabric(rte_mbuf** pkts) noexcept;
    std::uint16_t dispatch(rte_mbuf** pkts, std::uint16_t n, bool host) noexcept;
    // Host RX behind the backlog, then the engine; whether anything moved.
    bool take_host(common::time_ns now) noexcept;
    std::uint32_t send_outputs() noexcept;
    void flush() noexcept;
    // The fabric TX buffer, stamped as it leaves.
    void flush_fabric() noexcept;
    void stamp_fabric_buffer() noexcept;
    void publish() noexcept;
    void drain_at_stop() noexcept;

    pipeline::engine _engine;
    rte_rcu_qsbr* _rcu;
    worker_io _io;
    const clock& _clock;
    std::uint16_t _burst;
    idle_mode _idle;
    common::time_ns _drain_ns;
    common::time_ns _tx_batch_ns;
    std::uint64_t _tx_batch_cycles = 0;
    std::uint64_t _fabric_batch_since = 0; // cycles when the fabric buffer's oldest packet came
    std::vector<tables::path_id> _tracked;
    const std::atomic<bool>& _stop;
    // `stop` on the console: no RX, the rest (timers, control) goes on.
    const std::atomic<bool>& _paused;
    published_stats& _published;
    control_channel _control;

    tx_retry _host_retry{}; // the host TX buffer's error callback's target
    std::unique_ptr<rte_eth_dev_tx_buffer, tx_buffer_deleter> _tx_host;
    std::unique_ptr<rte_eth_dev_tx_buffer, tx_buffer_deleter> _tx_fabric;
    std::vector<rte_mbuf*> _backlog; // host frames not taken yet, oldest first
    std::uint16_t _backlog_n = 0;
    // The engine's room_for_refused() when the backlog was last offered
    // whole, and how much room its refused frames wait for (half a flow
    // queue, at least 1).
    pipeline::engine::host_room _offered;
    std::uint32_t _refill_frames = 1;
    // Dispatch staging: per target worker, up to one burst.
    std::vector<rte_mbuf*> _stage;
    std::vector<std::uint16_t> _stage_n;
    worker_counters _counters;
    capture* _capture = nullptr;
};

} // namespace laps::app
