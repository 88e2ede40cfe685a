#pragma once
// One laps instance: the data path of one host. Owns, in this order (and
// releases in reverse): its mempools, rings, ports, rte_flow rules, and one
// worker (with its engine) per worker lcore.
//
// Start-up decides the steering and logs it:
//   host port:   one worker: its queue; else RSS over one queue per worker where
//                the PMD hashes IP/UDP/TCP; else worker 0 reads the only queue and
//                hands frames to the others' rings by flow hash;
//   fabric port: one worker: its queue; link ports: the emulated link steers
//                by entropy tag; else rte_flow rules (validated, then created)
//                where the PMD takes them; else worker 0 dispatches by tag.

#include "app/clock.hpp"
#include "app/config.hpp"
#include "app/counters.hpp"
#include "app/flow_rules.hpp"
#include "app/mempools.hpp"
#include "app/ports.hpp"
#include "app/rings.hpp"
#include "app/worker.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace laps::app {

// What the emulated link needs to reach an instance's fabric port.
struct link_side {
    std::string name;
    std::vector<rte_ring*> rx; // link -> instance, one per worker
    std::vector<rte_ring*> tx; // instance -> link, one per worker
    std::uint16_t udp_port = 0;
    std::uint16_t tag_mask = 0;
    std::uint16_t workers = 1;
};

class instance {
public:
    // Throws startup_error (or pipeline::engine_error) naming what failed.
    instance(const instance_config& config, std::vector<unsigned> lcores, idle_mode idle,
             common::time_ns drain_ns, std::uint32_t link_ring_size, const clock& clk,
             const std::atomic<bool>& stop, const std::atomic<bool>& paused);
    ~instance();
    instance(const instance&) = delete;
    instance& operator=(const instance&) = delete;

    const std::string& name() const noexcept { return _config.name; }
    const instance_config& config() const noexcept { return _config; }
    const std::vector<unsigned>& lcores() const noexcept { return _lcores; }

    void launch();
    void wait() noexcept;

    link_side link() const;

    // Live figures, summed over workers (control lcore, while running).
    std::uint64_t host_taken() const noexcept;
    std::uint64_t fabric_received() const noexcept;
    std::uint64_t published_engine(std::size_t index) const noexcept;
    std::uint64_t published_worker(std::size_t index) const noexcept;
    std::uint64_t published_path(std::size_t index) const noexcept;
    // Sums one published counter (`read` picks it) over the workers.
    template <typename Read>
    std::uint64_t sum_published(Read&& read) const noexcept;
    const std::vector<tables::path_id>& tracked_pids() const noexcept { return _tracked; }
    // One worker's published counters (metrics: per-worker labels).
    const published_stats& published_at(std::size_t w) const noexcept { return *_published[w]; }

    // Final figures (after wait()).
    std::size_t worker_count() const noexcept { return _workers.size(); }
    const worker& worker_at(std::size_t i) const noexcept { return *_workers[i]; }
    // For console and telemetry work (worker::control), while running too.
    worker& worker_at(std::size_t i) noexcept { return *_workers[i]; }
    const port& host_port() const noexcept { return *_host; }
    const port& fabric_port() const noexcept { return *_fabric; }

    // Releases workers (engines), rules, ports and rings: every mbuf goes back
    // to its pool. The pools stay for mbufs_in_use().
    void close() noexcept;
    // Mbufs not back in this instance's pools, by pool name.
    std::vector<std::pair<std::string, unsigned>> mbufs_in_use() const;

private:
    void plan_host(queue_plan& plan);
    void start_fabric();
    void make_workers(const clock& clk, idle_mode idle, common::time_ns drain_ns, const std::atomic<bool>& stop,
                      const std::atomic<bool>& paused);

    instance_config _config;
    std::vector<unsigned> _lcores;
    std::uint16_t _n = 1;
    std::uint8_t _tag_bits = 0;
    std::vector<tables::path_id> _tracked;
    std::uint32_t _link_ring_size;

    mempool_ptr _packet_pool;
    mempool_ptr _control_pool;
    std::vector<mbuf_ring_ptr> _host_rings;   // software dispatch, per worker
    std::vector<mbuf_ring_ptr> _fabric_rings;
    std::vector<mbuf_ring_ptr> _link_rx;      // link ports
    std::vector<mbuf_ring_ptr> _link_tx;
    std::unique_ptr<port> _host;
    std::unique_ptr<port> _fabric;
    bool _host_dispatch = false;
    bool _fabric_dispatch = false;
    flow_rules _rules;
    std::vector<std::unique_ptr<published_stats>> _published;
    std::vector<std::unique_ptr<worker>> _workers;
};

} // namespace laps::app
