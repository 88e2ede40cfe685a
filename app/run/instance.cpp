#include "app/run/instance.hpp"

#include "app/errors.hpp"
#include "app/log.hpp"
#include "app/ports/steering.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include <exception>

namespace laps::app {

instance::instance(const instance_config& config, std::vector<unsigned> lcores, idle_mode idle,
                   const worker_timing& timing, std::uint32_t link_ring_size, const clock& clk,
                   const std::atomic<bool>& stop, const std::atomic<bool>& paused)
    : _config(config), _lcores(std::move(lcores)), _n(static_cast<std::uint16_t>(_lcores.size())),
      _link_ring_size(link_ring_size)
{
    const std::string& name = _config.name;
    _tag_bits = _config.steering.tag_bits.value_or(default_tag_bits);
    if ((1u << _tag_bits) < _n) {
        throw startup_error("steering.tag_bits: " + std::to_string(_tag_bits) + " bits give " +
                            std::to_string(1u << _tag_bits) + " steering tags, too few for " + std::to_string(_n) +
                            " workers" + (name == "laps" ? std::string() : " of instance " + name) +
                            ": set steering.tag_bits: " + std::to_string(tag_bits_for(_n)) +
                            " (or more, at most 8) on every host of the fabric (the width is fabric-wide)");
    }
    for (const auto& row : _config.engine.algo.paths.pst) {
        for (const auto pid : row.pids) {
            if (_tracked.size() < published_paths) {
                _tracked.push_back(pid);
            }
        }
    }

    // Instance-wide objects (pools, rings, shared tables) on the socket of
    // its first worker; each engine on its own worker's socket.
    const int socket = static_cast<int>(rte_lcore_to_socket_id(_lcores.front()));
    const auto& mp = _config.mempool;
    _packet_pool = make_pktmbuf_pool(name + "_pkt", "packet pool, mempool.mbufs", mp.mbufs, mp.cache, mp.data_room,
                                     socket);
    _control_pool = make_pktmbuf_pool(name + "_ctl", "control pool, mempool.control_mbufs", mp.control_mbufs,
                                      mp.cache,
                                      _config.engine.acks == pipeline::ack_mode::coalesced
                                          ? wire::coalescing_mbuf_data_room
                                          : wire::header_mbuf_data_room,
                                      socket);

    start_host(socket);
    start_fabric();
    if (_fabric_dispatch) {
        _fabric_rings.emplace_back(nullptr);
        for (std::uint16_t i = 1; i < _n; ++i) {
            _fabric_rings.push_back(
                make_mbuf_ring(name + "_fd" + std::to_string(i), _config.steering.ring_size, socket));
        }
    }
    check_mtu();
    for (const port* p : {_host.get(), _fabric.get()}) {
        if (!p->multi_seg_tx()) {
            log_line("port " + p->role() + ": " + p->driver() +
                     " does not advertise multi-segment TX; LAPS sends some DATA as 2-segment chains (resends, "
                     "host frames short of headroom), which net_null/net_ring/net_pcap/net_tap handle in software");
        }
    }
    try {
        make_tables(socket);
        make_workers(clk, idle, timing, stop, paused);
    } catch (const startup_error&) {
        throw;
    } catch (const std::exception& e) {
        throw startup_error("instance " + name + ": " + e.what());
    }
}

instance::~instance()
{
    close();
}

void instance::make_tables(int socket)
{
    // Hugepages: the tables in them, on the workers' socket. --no-huge: EAL's
    // -m budget belongs to the mempools; the heap serves (app/run/memory.hpp).
    _hugepages = rte_eal_has_hugepages() != 0;
    const auto& algo = _config.engine.algo;
    tables::shared_tables_options o;
    o.name = _config.name;
    o.pst_capacity = algo.tables.pst_capacity;
    o.socket_id = socket;
    o.paths = config::path_options(algo);
    // One worker: every ACK writes (the paper). Several: a write only when a
    // measurement moves realVal, so the entries' lines are not passed
    // between cores on every packet (docs/pipeline.md "Shared tables").
    o.paths.update_tolerance = algo.tables.pit_update_tolerance.value_or(_n > 1 ? 1.0 / 32 : 0.0);
    for (int attempt = 0; attempt < 2; ++attempt) {
        _table_memory = std::make_unique<engine_memory>(_hugepages, socket);
        o.paths.memory = _table_memory.get();
        try {
            _tables = std::make_unique<tables::shared_tables>(algo.paths, o);
            break;
        } catch (const std::bad_alloc&) {
            if (!_hugepages) {
                throw startup_error("instance " + _config.name + ": out of memory for the tables (tables.pit_capacity, "
                                    "tables.pst_capacity)");
            }
            log_line("instance " + _config.name + ": hugepage memory ran out for the tables; they use the process "
                     "heap instead (give EAL more hugepage memory: -m or --socket-mem)");
            _hugepages = false;
        } catch (const tables::pst_error& e) {
            throw startup_error(std::string("instance ") + _config.name + ": " + e.what());
        }
    }
    // Even one worker needs it: the console edits the tables from the
    // control lcore while the worker reads them.
    {
        const std::size_t bytes = rte_rcu_qsbr_get_memsize(_n);
        _rcu.reset(static_cast<rte_rcu_qsbr*>(rte_zmalloc_socket("laps_rcu", bytes, RTE_CACHE_LINE_SIZE, socket)));
        if (_rcu == nullptr || rte_rcu_qsbr_init(_rcu.get(), _n) != 0) {
            throw startup_error("instance " + _config.name + ": cannot set up the tables' RCU (" +
                                std::string(rte_strerror(rte_errno)) + "): give EAL more memory (-m)");
        }
        _tables->attach_rcu(_rcu.get());
    }
}

link_side instance::link() const
{
    link_side s;
    s.name = _config.name;
    for (const auto& r : _link_rx) {
        s.rx.push_back(r.get());
    }
    for (const auto& r : _link_tx) {
        s.tx.push_back(r.get());
    }
    s.udp_port = _config.outer.udp_port;
    s.tag_mask = tag_mask(_tag_bits);
    s.workers = _n;
    s.ip = _config.outer.ip.value_or(0);
    return s;
}

template <typename Read>
std::uint64_t instance::sum_published(Read&& read) const noexcept
{
    std::uint64_t sum = 0;
    for (const auto& p : _published) {
        sum += read(*p).load(std::memory_order_relaxed);
    }
    return sum;
}

std::uint64_t instance::host_taken() const noexcept
{
    return sum_published([](const published_stats& p) -> const auto& { return p.host_taken; });
}

std::uint64_t instance::fabric_received() const noexcept
{
    return sum_published([](const published_stats& p) -> const auto& { return p.fabric_received; });
}

std::uint64_t instance::published_engine(std::size_t index) const noexcept
{
    return sum_published([index](const published_stats& p) -> const auto& { return p.engine[index]; });
}

std::uint64_t instance::published_worker(std::size_t index) const noexcept
{
    return sum_published([index](const published_stats& p) -> const auto& { return p.worker[index]; });
}

std::uint64_t instance::published_path(std::size_t index) const noexcept
{
    return sum_published([index](const published_stats& p) -> const auto& { return p.per_path[index]; });
}

void instance::close() noexcept
{
    _workers.clear();
    _rules.clear();
    _host.reset();
    _fabric.reset();
    _host_rings.clear();
    _fabric_rings.clear();
    _link_rx.clear();
    _link_tx.clear();
}

std::vector<std::pair<std::string, unsigned>> instance::mbufs_in_use() const
{
    std::vector<std::pair<std::string, unsigned>> out;
    for (const auto* p : {_packet_pool.get(), _control_pool.get()}) {
        if (p != nullptr) {
            out.emplace_back(p->name, rte_mempool_in_use_count(p));
        }
    }
    return out;
}

} // namespace laps::app
