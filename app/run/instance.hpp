#pragma once
// One laps instance: the data path of one host. Owns, in this order (and
// releases in reverse): its mempools, rings, ports, rte_flow rules, and one
// worker (with its engine) per worker lcore.
//
// Start-up decides the steering and logs it:
//   host port:   one worker: its queue; else RSS over one queue per worker where
//                the PMD hashes IP/UDP/TCP; else a queue per worker where the
//                host keeps each flow on one queue (steering.host: queues;
//                auto for net_pcap with one rx_pcap per worker); else worker 0
//                reads the only queue and hands frames to the others' rings by
//                flow hash;
//   fabric port: one worker: its queue; link ports: the emulated link steers
//                by steering tag; else steering.fabric: queues (the device
//                delivers by tag itself: a loop-back net_ring); else rte_flow
//                rules (validated, then created) where the PMD takes them;
//                else worker 0 dispatches by tag.
//
// The instance owns the tables its workers share (PST, PIT, path sets) and
// the RCU variable its workers report quiescent states on; each worker's
// engine is built on the worker's own lcore, its memory on that lcore's
// socket (app/run/memory.hpp).

#include "app/run/clock.hpp"
#include "app/config/config.hpp"
#include "app/run/counters.hpp"
#include "app/ports/flow_rules.hpp"
#include "app/run/memory.hpp"
#include "app/ports/mempools.hpp"
#include "app/ports/ports.hpp"
#include "app/ports/rings.hpp"
#include "app/run/worker.hpp"
#include "tables/shared_tables.hpp"

#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

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
    std::uint32_t ip = 0; // outer.ip: the link delivers what is addressed to it here
};

class instance {
public:
    // Throws startup_error (or pipeline::engine_error) naming what failed.
    instance(const instance_config& config, std::vector<unsigned> lcores, idle_mode idle,
             const worker_timing& timing, std::uint32_t link_ring_size, const clock& clk,
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
    std::uint8_t tag_bits() const noexcept { return _tag_bits; }

    // The tables the workers share. Control-plane edits hold
    // tables().control_mutex(); see console_backend for the protocol.
    tables::shared_tables& tables() noexcept { return *_tables; }
    const tables::shared_tables& tables() const noexcept { return *_tables; }

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
    // Ports and their steering (instance_ports.cpp).
    void start_host(int socket);
    void plan_host(queue_plan& plan);
    void start_fabric();
    void make_tables(int socket);
    // The fabric MTU (config, else the port's), and the start-up warning
    // when full-size host frames cannot cross it.
    void check_mtu();
    // Sets the host port's MTU per ports.host.mtu; returns the one it has.
    std::uint16_t settle_host_mtu(std::uint16_t current, unsigned largest);
    // What a DATA adds to its host frame at most: 86 bytes, 106 with a key.
    unsigned encapsulation_overhead() const noexcept
    {
        return static_cast<unsigned>(_config.engine.auth_key ? wire::max_overhead_authenticated : wire::max_overhead);
    }
    // Workers and their engines (instance_workers.cpp).
    void make_workers(const clock& clk, idle_mode idle, const worker_timing& timing, const std::atomic<bool>& stop,
                      const std::atomic<bool>& paused);
    void build_workers(const std::vector<pipeline::engine_config>& engines, const std::vector<worker_io>& ios,
                       const clock& clk, idle_mode idle, const worker_timing& timing, const std::atomic<bool>& stop,
                       const std::atomic<bool>& paused);

    instance_config _config;
    std::vector<unsigned> _lcores;
    std::uint16_t _n = 1;
    std::uint8_t _tag_bits = 0;
    std::vector<tables::path_id> _tracked;
    std::uint32_t _link_ring_size;

    mempool_ptr _packet_pool;
    mempool_ptr _control_pool;
    // Engines' and tables' memory (declared before what uses it, so freed after).
    bool _hugepages = false;
    std::unique_ptr<engine_memory> _table_memory;
    std::vector<std::unique_ptr<engine_memory>> _worker_memory;
    struct rcu_deleter {
        void operator()(rte_rcu_qsbr* v) const noexcept { rte_free(v); }
    };
    std::unique_ptr<rte_rcu_qsbr, rcu_deleter> _rcu;
    std::unique_ptr<tables::shared_tables> _tables;
    std::vector<mbuf_ring_ptr> _host_rings;   // software dispatch, per worker
    std::vector<mbuf_ring_ptr> _fabric_rings;
    std::vector<mbuf_ring_ptr> _link_rx;      // link ports
    std::vector<mbuf_ring_ptr> _link_tx;
    std::unique_ptr<port> _host;
    std::unique_ptr<port> _fabric;
    bool _host_dispatch = false;
    bool _fabric_dispatch = false;
    std::uint16_t _fabric_mtu = 1500;
    bool _host_queues = false;   // a queue per worker, no RSS (steering.host: queues)
    bool _fabric_queues = false; // a queue per worker, the device steers (steering.fabric: queues)
    flow_rules _rules;
    std::vector<std::unique_ptr<published_stats>> _published;
    std::vector<std::unique_ptr<worker>> _workers;
};

} // namespace laps::app
