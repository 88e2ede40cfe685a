// The instance's workers: each engine built on its own lcore, then launched
// (docs/app.md "Memory").
#include "app/run/instance.hpp"

#include "app/errors.hpp"
#include "app/log.hpp"
#include "app/ports/steering.hpp"

#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <cstdio>
#include <exception>
#include <functional>

namespace laps::app {

namespace {

// Work run on a worker lcore before the data path starts (the engine's
// construction): its exception comes back to the main lcore.
struct lcore_job {
    std::function<void()> work;
    std::exception_ptr error;
};

int run_job(void* arg) noexcept
{
    auto* job = static_cast<lcore_job*>(arg);
    try {
        job->work();
    } catch (...) {
        job->error = std::current_exception();
    }
    return 0;
}

} // namespace

void instance::make_workers(const clock& clk, idle_mode idle, const worker_timing& timing,
                            const std::atomic<bool>& stop, const std::atomic<bool>& paused)
{
    wire::outer_config outer;
    outer.own_mac = _config.outer.mac.value_or(_fabric->mac());
    outer.next_hop_mac = _config.outer.next_hop_mac;
    outer.own_ip = *_config.outer.ip;
    outer.udp_port = _config.outer.udp_port;
    outer.ttl = _config.outer.ttl;
    outer.mtu = _fabric_mtu;

    std::vector<rte_ring*> host_rings;
    std::vector<rte_ring*> fabric_rings;
    for (const auto& r : _host_rings) {
        host_rings.push_back(r.get());
    }
    for (const auto& r : _fabric_rings) {
        fabric_rings.push_back(r.get());
    }
    const bool host_own_queue = !_host_dispatch;
    const bool fabric_own_queue = !_fabric_dispatch;
    std::vector<pipeline::engine_config> engines;
    std::vector<worker_io> ios;
    for (std::uint16_t i = 0; i < _n; ++i) {
        pipeline::engine_config e = _config.engine;
        e.name = _config.name + "_w" + std::to_string(i);
        e.outer = outer;
        e.entropy_tag_bits = _tag_bits;
        e.worker = i;
        e.workers = _n;
        e.control_pool = _control_pool.get();
        e.epoch = random_epoch();
        e.socket_id = static_cast<int>(rte_lcore_to_socket_id(_lcores[i]));
        // Each worker gets an even share of the port's rate limit.
        e.port_rate_bps = _config.engine.port_rate_bps / _n;
        // The shared tables are the instance's: the engine does not read these.
        e.algo.paths = {};
        engines.push_back(std::move(e));

        worker_io io;
        io.index = i;
        io.workers = _n;
        io.host_port = _host->id();
        io.fabric_port = _fabric->id();
        io.txq = i;
        io.host_rxq = host_own_queue ? i : (i == 0 ? 0 : -1);
        io.fabric_rxq = fabric_own_queue ? i : (i == 0 ? 0 : -1);
        io.host_ring = _host_dispatch && i > 0 ? host_rings[i] : nullptr;
        io.fabric_ring = _fabric_dispatch && i > 0 ? fabric_rings[i] : nullptr;
        io.host_dispatcher = _host_dispatch && i == 0;
        io.fabric_dispatcher = _fabric_dispatch && i == 0;
        io.host_rings = host_rings;
        io.fabric_rings = fabric_rings;
        io.udp_port = outer.udp_port;
        io.tag_mask = tag_mask(_tag_bits);
        ios.push_back(std::move(io));

        _published.push_back(std::make_unique<published_stats>());
    }
    build_workers(engines, ios, clk, idle, timing, stop, paused);

    std::string lcores;
    for (const auto l : _lcores) {
        if (!lcores.empty()) {
            lcores += ',';
        }
        lcores += std::to_string(l);
    }
    log_line("instance " + _config.name + ": " + std::to_string(_n) + " worker(s) on lcore(s) " + lcores + ", fabric " + format_ipv4(outer.own_ip) + " " + format_mac(outer.own_mac) + " -> next hop " +
             format_mac(outer.next_hop_mac) + ", UDP " + std::to_string(outer.udp_port) + ", " +
             std::to_string(_config.engine.algo.paths.pst.size()) + " destinations, " +
             std::to_string(_config.engine.algo.paths.pit.size()) + " paths, steering tag bits " +
             std::to_string(_tag_bits));
    std::size_t engine_bytes = 0;
    for (const auto& m : _worker_memory) {
        engine_bytes += m->bytes();
    }
    const auto where = [](bool hugepages) {
        return hugepages ? std::string("hugepages on the socket") : std::string("process heap");
    };
    char tolerance[32];
    std::snprintf(tolerance, sizeof tolerance, "%.4f", _tables->paths().update_tolerance());
    log_line("instance " + _config.name + ": memory: engines " + format_megabytes(engine_bytes / _n) +
             " per worker (" + where(_hugepages) + ", built on each worker's lcore), shared tables " +
             format_megabytes(_table_memory->bytes()) + " (" + where(_table_memory->hugepages()) + ")" +
             (rte_eal_has_hugepages() ? std::string() : std::string(": EAL has no hugepages (--no-huge)")) +
             "; PIT update tolerance " + tolerance + " of realVal");
}

void instance::build_workers(const std::vector<pipeline::engine_config>& engines, const std::vector<worker_io>& ios,
                             const clock& clk, idle_mode idle, const worker_timing& timing,
                             const std::atomic<bool>& stop, const std::atomic<bool>& paused)
{
    _workers.resize(_n);
    _worker_memory.resize(_n);
    std::vector<lcore_job> jobs(_n);
    for (std::uint16_t i = 0; i < _n; ++i) {
        const int socket = static_cast<int>(rte_lcore_to_socket_id(_lcores[i]));
        _worker_memory[i] = std::make_unique<engine_memory>(_hugepages, socket);
        jobs[i].work = [this, i, &engines, &ios, &clk, idle, timing, &stop, &paused] {
            pipeline::engine_config e = engines[i];
            e.memory = _worker_memory[i].get();
            _workers[i] = std::make_unique<worker>(e, *_tables, _rcu.get(), ios[i], clk, _config.burst, idle,
                                                   timing, _tracked, stop, paused, *_published[i]);
        };
    }
    // Each engine is built by its own lcore, all at once: its heap pages are
    // first touched there, and start-up does not wait for them one by one.
    for (std::uint16_t i = 0; i < _n; ++i) {
        if (rte_eal_remote_launch(run_job, &jobs[i], _lcores[i]) != 0) {
            run_job(&jobs[i]); // cannot happen before launch(); build it here rather than fail
        }
    }
    for (std::uint16_t i = 0; i < _n; ++i) {
        rte_eal_wait_lcore(_lcores[i]);
    }
    bool out_of_hugepages = false;
    for (auto& job : jobs) {
        if (!job.error) {
            continue;
        }
        try {
            std::rethrow_exception(job.error);
        } catch (const std::bad_alloc&) {
            out_of_hugepages = _hugepages;
            if (!out_of_hugepages) {
                throw startup_error("instance " + _config.name + ": out of memory building the engines "
                                    "(tables.flow_capacity, retransmit.window_packets)");
            }
        }
    }
    if (out_of_hugepages) {
        _workers.clear();
        _worker_memory.clear();
        log_line("instance " + _config.name + ": hugepage memory ran out for the engines; they use the process "
                 "heap instead (give EAL more hugepage memory: -m or --socket-mem, or lower tables.flow_capacity)");
        _hugepages = false;
        build_workers(engines, ios, clk, idle, timing, stop, paused);
    }
}

void instance::launch()
{
    for (std::size_t i = 0; i < _workers.size(); ++i) {
        const int rc = rte_eal_remote_launch(worker::launch, _workers[i].get(), _lcores[i]);
        if (rc != 0) {
            throw startup_error("lcore " + std::to_string(_lcores[i]) + " is busy: cannot launch worker " +
                                std::to_string(i) + " of instance " + _config.name);
        }
    }
}

void instance::wait() noexcept
{
    for (const auto l : _lcores) {
        rte_eal_wait_lcore(l);
    }
}

} // namespace laps::app
