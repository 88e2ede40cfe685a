#pragma once
// Live capture of a running laps to a pcapng file, with no secondary process
// (dpdk-dumpcap and pdump need one, which --no-shconf rules out):
//
//   worker lcores                       capture thread
//   tap(): filter by side and pid,      dequeue -> rte_pcapng_write_packets
//          rte_pcapng_copy -> ring ---> (the file), until stop, the packet
//          (full ring, empty pool:      count or the duration
//           counted, never waited on)
//
// Workers never do a syscall: they copy into the capture's mempool and
// enqueue; the capture's own thread writes. The pool and ring are made at the
// first start and live until the capture object goes (after the workers
// stop), so a worker still inside tap() when a capture stops holds nothing
// that is freed under it.
//
// Tap points: a worker's host RX (frames for its engine), host TX, fabric RX,
// fabric TX (before the TX buffer: a packet the port then refuses, counted in
// tx_drop_*, is in the file). Interfaces in the file are the DPDK ports
// (rte_pcapng writes one per port), the direction in the packet's flags.

#include "app/config/config.hpp"
#include "app/control/metrics.hpp"
#include "app/ports/mempools.hpp"
#include "app/ports/rings.hpp"

#include <rte_mbuf.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>
#include <ostream>
#include <string>
#include <thread>

struct rte_pcapng;

namespace laps::app {

enum class capture_point : std::uint8_t { host_rx, host_tx, fabric_rx, fabric_tx };

class capture {
public:
    capture() = default;
    ~capture();
    capture(const capture&) = delete;
    capture& operator=(const capture&) = delete;

    // Throws std::runtime_error naming the problem (already running, file).
    void start(const capture_config& config);
    // Returns false when no capture was running.
    bool stop();
    void show(std::ostream& out);
    void write_metrics(metrics_writer& w) const;
    // Copies not back in the capture's pool (0 after stop); nullopt when no
    // capture ever ran.
    std::optional<std::pair<std::string, unsigned>> mbufs_in_use() const;

    // Worker side: one relaxed load when no capture runs.
    // `udp_port`: the instance's LAPS port, to read a packet's pid.
    void tap(capture_point point, std::uint16_t port, std::uint16_t queue, std::uint16_t udp_port,
             rte_mbuf* const* pkts, std::uint16_t n) noexcept
    {
        if (_active.load(std::memory_order_acquire)) {
            offer(point, port, queue, udp_port, pkts, n);
        }
    }

private:
    void offer(capture_point point, std::uint16_t port, std::uint16_t queue, std::uint16_t udp_port,
               rte_mbuf* const* pkts, std::uint16_t n) noexcept;
    void write_loop() noexcept;
    void prime_clock();
    void join();
    void discard_leftovers();

    std::mutex _mutex; // start, stop, show
    mempool_ptr _pool;
    mbuf_ring_ptr _ring;
    std::thread _writer;
    rte_pcapng* _file = nullptr; // the writer thread's while it runs

    // Read by workers while active.
    std::atomic<bool> _active{false};
    std::atomic<bool> _stop_request{false};
    // Set by start() before _active (release); atomics because a worker
    // still in a previous capture's tap() may read them meanwhile.
    std::atomic<bool> _host{true};
    std::atomic<bool> _fabric{true};
    std::atomic<std::int32_t> _pid{-1};
    std::atomic<std::uint32_t> _snaplen{65535};

    // Figures of the current (or last) capture.
    capture_config _config;
    std::atomic<std::uint64_t> _offered{0};      // packets that matched the filter
    std::atomic<std::uint64_t> _written{0};
    std::atomic<std::uint64_t> _drop_ring_full{0};
    std::atomic<std::uint64_t> _drop_no_mbuf{0};
    std::atomic<std::uint64_t> _drop_write{0};
    std::atomic<std::uint64_t> _over_limit{0};   // copies made after the count was reached
    std::atomic<bool> _running{false};           // the writer thread has work
    std::string _ended;                           // why the last capture ended (writer thread)
    // All captures, for metrics.
    std::atomic<std::uint64_t> _total_written{0};
    std::atomic<std::uint64_t> _total_drops[3]{};  // ring full, no mbuf, write failed
    std::chrono::steady_clock::time_point _started;
};

} // namespace laps::app
