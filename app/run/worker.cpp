#include "app/run/worker.hpp"

#include "app/run/idle.hpp"

#include "wire/stamp.hpp"

#include "app/control/capture.hpp"
#include "app/errors.hpp"
#include "app/ports/steering.hpp"


#include <algorithm>
#include <array>

namespace laps::app {

namespace {

constexpr std::uint16_t max_burst = 512;
// l3fwd's BURST_TX_DRAIN_US: a busy worker flushes partial TX buffers this often.
constexpr common::time_ns drain_period_ns = 100 * common::ns_per_us;
constexpr common::time_ns publish_period_ns = common::ns_per_ms;

// Unsent packets of a TX buffer: freed and counted in the worker's counter.
void count_unsent(rte_mbuf** unsent, std::uint16_t count, void* userdata) noexcept
{
    rte_pktmbuf_free_bulk(unsent, count);
    *static_cast<std::uint64_t*>(userdata) += count;
}

// Host frames a port refused: tried again a few times before they are
// freed. Their DATA was ACKed to the sender, which will not resend them, so
// a refused host frame is data the host never gets (net_tap refuses a frame
// whose write the kernel turned down for a moment).
constexpr int host_tx_tries = 4;

void retry_then_count(rte_mbuf** unsent, std::uint16_t count, void* userdata) noexcept
{
    auto* r = static_cast<tx_retry*>(userdata);
    std::uint16_t sent = 0;
    for (int attempt = 0; attempt < host_tx_tries && sent < count; ++attempt) {
        sent = static_cast<std::uint16_t>(sent + rte_eth_tx_burst(r->port, r->queue, unsent + sent,
                                                                    static_cast<std::uint16_t>(count - sent)));
    }
    *r->retried += sent;
    if (sent < count) {
        rte_pktmbuf_free_bulk(unsent + sent, count - sent);
        *r->drops += count - sent;
    }
}

rte_eth_dev_tx_buffer* make_tx_buffer(std::uint16_t burst, std::uint64_t* drops, std::uint16_t port,
                                      tx_retry* retry = nullptr)
{
    const int socket = rte_eth_dev_socket_id(port);
    auto* b = static_cast<rte_eth_dev_tx_buffer*>(
        rte_zmalloc_socket("laps_tx_buffer", RTE_ETH_TX_BUFFER_SIZE(burst), 0, socket < 0 ? SOCKET_ID_ANY : socket));
    if (b == nullptr) {
        throw startup_error("cannot allocate a TX buffer: out of DPDK memory (raise -m)");
    }
    rte_eth_tx_buffer_init(b, burst);
    if (retry != nullptr) {
        rte_eth_tx_buffer_set_err_callback(b, retry_then_count, retry);
    } else {
        rte_eth_tx_buffer_set_err_callback(b, count_unsent, drops);
    }
    return b;
}

} // namespace

worker::worker(const pipeline::engine_config& engine, tables::shared_tables& tables, rte_rcu_qsbr* rcu, worker_io io,
               const clock& clk, std::uint16_t burst, idle_mode idle, const worker_timing& timing,
               std::span<const tables::path_id> tracked_pids, const std::atomic<bool>& stop,
               const std::atomic<bool>& paused, published_stats& published)
    : _engine(engine, tables), _rcu(rcu), _io(std::move(io)), _clock(clk), _burst(std::min(burst, max_burst)), _idle(idle),
      _drain_ns(timing.drain_ns), _tx_batch_ns(timing.tx_batch_ns), _tracked(tracked_pids.begin(), tracked_pids.end()), _stop(stop), _paused(paused),
      _published(published), _control(engine.name + "_ctl")
{
    _host_retry = tx_retry{&_counters.tx_drop_host, &_counters.tx_host_retried, _io.host_port, _io.txq};
    _tx_host.reset(make_tx_buffer(_burst, &_counters.tx_drop_host, _io.host_port, &_host_retry));
    _tx_fabric.reset(make_tx_buffer(_burst, &_counters.tx_drop_fabric, _io.fabric_port));
    _tx_batch_cycles = _clock.cycles_for(_tx_batch_ns);
    // Two bursts: one of frames a full flow left behind, one read behind them.
    _backlog.assign(2 * static_cast<std::size_t>(_burst), nullptr);
    _refill_frames = std::max<std::uint32_t>(1, engine.flow_queue_packets / 2);
    _stage.assign(static_cast<std::size_t>(_io.workers) * _burst, nullptr);
    _stage_n.assign(_io.workers, 0);
    if (_tracked.size() > published_paths) {
        _tracked.resize(published_paths);
    }
    if (_rcu != nullptr && rte_rcu_qsbr_thread_register(_rcu, _io.index) != 0) {
        throw startup_error("worker " + std::to_string(_io.index) + ": cannot register with the tables' RCU");
    }
}

std::uint16_t worker::dispatch(rte_mbuf** pkts, std::uint16_t n, bool host) noexcept
{
    std::uint16_t keep = 0;
    for (std::uint16_t i = 0; i < n; ++i) {
        rte_mbuf* m = pkts[i];
        const std::uint16_t owner = host ? host_owner(m, _io.workers, _io.index)
                                         : fabric_owner(m, _io.udp_port, _io.tag_mask, _io.workers, _io.index);
        if (owner == _io.index) {
            pkts[keep++] = m;
        } else {
            _stage[static_cast<std::size_t>(owner) * _burst + _stage_n[owner]++] = m;
        }
    }
    auto& rings = host ? _io.host_rings : _io.fabric_rings;
    for (std::uint16_t w = 0; w < _io.workers; ++w) {
        const std::uint16_t count = _stage_n[w];
        if (count == 0) {
            continue;
        }
        _stage_n[w] = 0;
        rte_mbuf** first = _stage.data() + static_cast<std::size_t>(w) * _burst;
        const unsigned sent = rte_ring_enqueue_burst(rings[w], reinterpret_cast<void* const*>(first), count, nullptr);
        (host ? _counters.dispatch_host_out : _counters.dispatch_fabric_out) += sent;
        if (sent < count) {
            rte_pktmbuf_free_bulk(first + sent, count - sent);
            _counters.dispatch_drop_full += count - sent;
        }
    }
    return keep;
}

std::uint16_t worker::receive_host(rte_mbuf** pkts) noexcept
{
    if (_io.host_rxq < 0) {
        return static_cast<std::uint16_t>(
            rte_ring_dequeue_burst(_io.host_ring, reinterpret_cast<void**>(pkts), _burst, nullptr));
    }
    const std::uint16_t n = rte_eth_rx_burst(_io.host_port, static_cast<std::uint16_t>(_io.host_rxq), pkts, _burst);
    if (!_io.host_dispatcher || n == 0) {
        return n;
    }
    return dispatch(pkts, n, true);
}

std::uint16_t worker::receive_fabric(rte_mbuf** pkts) noexcept
{
    if (_io.fabric_rxq < 0) {
        return static_cast<std::uint16_t>(
            rte_ring_dequeue_burst(_io.fabric_ring, reinterpret_cast<void**>(pkts), _burst, nullptr));
    }
    const std::uint16_t n =
        rte_eth_rx_burst(_io.fabric_port, static_cast<std::uint16_t>(_io.fabric_rxq), pkts, _burst);
    if (!_io.fabric_dispatcher || n == 0) {
        return n;
    }
    return dispatch(pkts, n, false);
}

bool worker::take_host(common::time_ns now) noexcept
{
    // Frames of a full flow wait in the backlog ahead of newer ones (the
    // engine keeps each flow's order); the port is read while a burst still
    // fits behind them, so one full flow does not stop the others. Only a
    // backlog without room stops host RX (backpressure at the port).
    const std::uint16_t refused = _backlog_n; // what the engine did not take so far
    std::uint16_t n = 0;
    if (_backlog.size() - _backlog_n >= _burst) {
        n = receive_host(_backlog.data() + _backlog_n);
        if (n > 0) {
            _counters.rx_host += n;
            if (_capture != nullptr) {
                _capture->tap(capture_point::host_rx, _io.host_port, _io.index, _io.udp_port,
                              _backlog.data() + _backlog_n, n);
            }
            _backlog_n = static_cast<std::uint16_t>(_backlog_n + n);
        }
    }
    if (_backlog_n == 0) {
        return false;
    }
    // Refused frames are offered again once their flows have made room for
    // half a flow queue of them (or all), or at once when a flow stalled or
    // went: offered sooner, each would be classified and looked up again for
    // the engine to take a few. Their flows still hold at least half a
    // queue meanwhile, so none runs dry. New frames are offered behind them
    // at once (the other flows do not wait). docs/app.md "Lcores and steering".
    const pipeline::engine::host_room room = _engine.room_for_refused();
    const bool again = refused == 0 || room.changes != _offered.changes ||
                       room.freed - _offered.freed >= std::min<std::uint64_t>(refused, _refill_frames);
    std::uint16_t took = 0;
    if (again) {
        // Taken before the call: room made during it counts toward the next.
        _offered = room;
        // What the engine does not take comes back at the front, in order.
        took = _engine.from_host(_backlog.data(), _backlog_n, now);
    } else if (n > 0) {
        took = _engine.from_host_behind(_backlog.data() + refused, n, now);
    } else {
        ++_counters.backlog_offers_skipped;
    }
    _backlog_n = static_cast<std::uint16_t>(_backlog_n - took);
    _counters.backpressure_polls += _backlog_n > 0;
    return n > 0 || took > 0;
}

std::uint32_t worker::send_outputs() noexcept
{
    // The engine's outputs are taken straight into the free slots of the TX
    // buffers, a run at a time, where rte_eth_tx_buffer() would add them one
    // by one (it does no more than that: store, count, send when full); a
    // full buffer is sent as rte_eth_tx_buffer() would send it.
    std::uint32_t total = 0;
    rte_eth_dev_tx_buffer* fabric = _tx_fabric.get();
    std::uint16_t k;
    while ((k = _engine.take_to_fabric(fabric->pkts + fabric->length,
                                       static_cast<std::uint16_t>(fabric->size - fabric->length))) > 0) {
        if (_capture != nullptr) {
            _capture->tap(capture_point::fabric_tx, _io.fabric_port, _io.txq, _io.udp_port,
                          fabric->pkts + fabric->length, k);
        }
        if (fabric->length == 0) {
            _fabric_batch_since = _clock.cycles();
        }
        fabric->length = static_cast<std::uint16_t>(fabric->length + k);
        _counters.tx_fabric += k;
        total += k;
        if (fabric->length == fabric->size) {
            flush_fabric();
        }
    }
    rte_eth_dev_tx_buffer* host = _tx_host.get();
    while ((k = _engine.take_to_host(host->pkts + host->length,
                                     static_cast<std::uint16_t>(host->size - host->length))) > 0) {
        if (_capture != nullptr) {
            _capture->tap(capture_point::host_tx, _io.host_port, _io.txq, _io.udp_port, host->pkts + host->length, k);
        }
        host->length = static_cast<std::uint16_t>(host->length + k);
        _counters.tx_host += k;
        total += k;
        if (host->length == host->size) {
            rte_eth_tx_buffer_flush(_io.host_port, _io.txq, host);
        }
    }
    return total;
}

void worker::flush() noexcept
{
    flush_fabric();
    rte_eth_tx_buffer_flush(_io.host_port, _io.txq, _tx_host.get());
}

void worker::stamp_fabric_buffer() noexcept
{
    // One clock read for the burst: the packets leave together.
    const common::time_ns now = _clock.now();
    const auto* b = _tx_fabric.get();
    for (std::uint16_t i = 0; i < b->length; ++i) {
        _counters.tx_stamped += wire::stamp_departure(b->pkts[i], _io.udp_port, now);
    }
}

void worker::flush_fabric() noexcept
{
    if (_tx_fabric->length == 0) {
        return;
    }
    stamp_fabric_buffer();
    rte_eth_tx_buffer_flush(_io.fabric_port, _io.txq, _tx_fabric.get());
}

void worker::publish() noexcept
{
    constexpr auto relaxed = std::memory_order_relaxed;
    const auto& ec = _engine.counters();
    for (std::size_t i = 0; i < pipeline::engine_counter_list.size(); ++i) {
        _published.engine[i].store(ec.*pipeline::engine_counter_list[i].field, relaxed);
    }
    for (std::size_t i = 0; i < worker_counter_list.size(); ++i) {
        _published.worker[i].store(_counters.*worker_counter_list[i].field, relaxed);
    }
    for (std::size_t i = 0; i < wire::parse_error_count; ++i) {
        _published.parse[i].store(_engine.parse_errors()[i], relaxed);
    }
    const auto& per_path = _engine.packets_per_path();
    const auto& path_stats = _engine.path_stats();
    for (std::size_t i = 0; i < _tracked.size(); ++i) {
        _published.per_path[i].store(_tracked[i] < per_path.size() ? per_path[_tracked[i]] : 0, relaxed);
        if (_tracked[i] < path_stats.size()) {
            _published.per_path_samples[i].store(path_stats[_tracked[i]].latency_samples, relaxed);
            _published.per_path_latency_min[i].store(path_stats[_tracked[i]].latency_min_ns, relaxed);
        }
    }
    _published.host_taken.store(ec.host_rx, relaxed);
    _published.fabric_received.store(ec.fabric_rx, relaxed);
}

int worker::run() noexcept
{
    idler idle(_idle);
    std::array<rte_mbuf*, max_burst> pkts;
    const std::uint64_t drain_cycles = _clock.cycles_for(drain_period_ns);
    const std::uint64_t publish_cycles = _clock.cycles_for(publish_period_ns);
    std::uint64_t last_flush = _clock.cycles();
    std::uint64_t last_publish = last_flush;
    if (_rcu != nullptr) {
        rte_rcu_qsbr_thread_online(_rcu, _io.index);
    }
    _published.running.store(true, std::memory_order_release);

    while (!_stop.load(std::memory_order_relaxed)) {
        ++_counters.loops;
        // Between iterations this worker holds no reference into the shared
        // tables: a grace period of the control plane ends when every worker
        // has been here once (a store to this worker's own line).
        if (_rcu != nullptr) {
            rte_rcu_qsbr_quiescent(_rcu, _io.index);
        }
        const common::time_ns now = _clock.now();
        bool busy = false;
        _control.serve(_engine);
        const bool paused = _paused.load(std::memory_order_relaxed);

        if (!paused) { // paused: forwarding stopped from the console; frames wait at the ports
            busy = take_host(now);
        }

        const std::uint16_t f = paused ? 0 : receive_fabric(pkts.data());
        if (f > 0) {
            // Arrival: right after the burst that received them (a NIC's RX
            // timestamps would be closer; docs/app.md "Timestamps").
            const common::time_ns arrived = _clock.now();
            busy = true;
            _counters.rx_fabric += f;
            if (_capture != nullptr) {
                _capture->tap(capture_point::fabric_rx, _io.fabric_port, _io.index, _io.udp_port, pkts.data(), f);
            }
            _engine.from_fabric(pkts.data(), f, arrived);
        }

        _engine.poll(now);
        busy = send_outputs() > 0 || busy;

        const std::uint64_t cycles = _clock.cycles();
        if (busy) {
            ++_counters.busy_loops;
            const auto& ec = _engine.counters();
            _published.host_taken.store(ec.host_rx, std::memory_order_relaxed);
            _published.fabric_received.store(ec.fabric_rx, std::memory_order_relaxed);
        }
        // Batch while busy; an idle iteration or the drain period sends what waits.
        if (!busy || cycles - last_flush > drain_cycles) {
            flush();
            last_flush = cycles;
        } else if (_tx_fabric->length != 0 && cycles - _fabric_batch_since >= _tx_batch_cycles) {
            flush_fabric();
        }
        if (cycles - last_publish > publish_cycles) {
            publish();
            last_publish = cycles;
        }
        idle.after(busy);
    }
    drain_at_stop();
    publish();
    _published.running.store(false, std::memory_order_release);
    if (_rcu != nullptr) {
        rte_rcu_qsbr_thread_offline(_rcu, _io.index);
    }
    return 0;
}

void worker::drain_at_stop() noexcept
{
    // Frames the engine never took are not ours to send: free and count them.
    if (_backlog_n > 0) {
        rte_pktmbuf_free_bulk(_backlog.data(), _backlog_n);
        _counters.stop_drop_backlog += _backlog_n;
        _backlog_n = 0;
    }
    // What the engine has taken goes out: staged packets, ready flows, paced
    // releases; ACKs still coming back are taken so that frames in flight are
    // released, until nothing is unfinished or the drain time is up.
    std::array<rte_mbuf*, max_burst> pkts;
    const common::time_ns deadline = _clock.now() + _drain_ns;
    for (;;) {
        if (_rcu != nullptr) {
            rte_rcu_qsbr_quiescent(_rcu, _io.index);
        }
        const common::time_ns now = _clock.now();
        const std::uint16_t f = receive_fabric(pkts.data());
        if (f > 0) {
            _counters.rx_fabric += f;
            _engine.from_fabric(pkts.data(), f, now);
        }
        _engine.poll(now);
        const std::uint32_t sent = send_outputs();
        flush();
        if (f == 0 && sent == 0 && _engine.unfinished_frames() == 0) {
            break;
        }
        if (now >= deadline) {
            break;
        }
    }
    // What the drain could not finish is freed here and counted by where it
    // was (stop_free_queued, _in_flight, _held, _staged): the exit report's
    // accounting balances (docs/pipeline.md "Receiver guarantees").
    _engine.release_all();
}

} // namespace laps::app
