#include "app/run/instance.hpp"

#include "app/errors.hpp"
#include "app/log.hpp"
#include "app/ports/steering.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <cstdio>
#include <exception>
#include <functional>

namespace laps::app {

namespace {

std::string hex(std::uint64_t v)
{
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string describe(const port& p)
{
    return p.name() + " (" + p.driver() + ", port " + std::to_string(p.id()) + ", " +
           std::to_string(p.plan().rx_queues) + " RX / " + std::to_string(p.plan().tx_queues) + " TX queues, MAC " +
           format_mac(p.mac()) + ")";
}

} // namespace

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
                                      mp.cache, wire::header_mbuf_data_room, socket);

    _host = std::make_unique<port>(name == "laps" ? "host" : name + ".host", _config.host);
    queue_plan host_plan;
    plan_host(host_plan);
    _host->start(host_plan, _config.host.rx_desc, _config.host.tx_desc, _packet_pool.get());
    if (_host_dispatch) {
        _host_rings.emplace_back(nullptr);
        for (std::uint16_t i = 1; i < _n; ++i) {
            _host_rings.push_back(make_mbuf_ring(name + "_hd" + std::to_string(i), _config.steering.ring_size, socket));
        }
    }
    const char* host_mode = _n == 1         ? "one worker, one queue"
                            : host_plan.rss ? "RSS over IP/UDP/TCP, one queue per worker"
                            : _host_queues  ? "queues: worker i reads RX queue i (each flow stays on one queue)"
                                            : "software: worker 0 reads the queue and dispatches by flow hash";
    log_line(std::string("port ") + _host->role() + ": " + describe(*_host) + "; steering: " + host_mode);

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

void instance::plan_host(queue_plan& plan)
{
    plan.tx_queues = _n;
    plan.rx_queues = 1;
    if (_n == 1) {
        return;
    }
    const auto mode = _config.steering.host;
    const std::uint16_t queues = _host->info().max_rx_queues;
    // net_pcap's RX queues are its rx_pcap files: reading one queue of
    // several would leave the other files unread.
    const bool pcap_files = _host->driver() == "net_pcap" && queues > 1;
    if (mode == host_steering::queues || (mode == host_steering::automatic && pcap_files && queues == _n)) {
        if (queues < _n) {
            throw startup_error("steering.host: queues: port " + _host->role() + " (" + _host->driver() + ") has " +
                                std::to_string(queues) + " RX queue(s) for " + std::to_string(_n) +
                                " workers; give it one per worker (net_pcap: one rx_pcap= per worker)");
        }
        plan.rx_queues = _n;
        _host_queues = true;
        return;
    }
    if (mode == host_steering::automatic && pcap_files) {
        throw startup_error("port " + _host->role() + ": net_pcap has " + std::to_string(queues) +
                            " rx_pcap files (RX queues) for " + std::to_string(_n) +
                            " workers: give one rx_pcap per worker, each file holding whole flows (steering.host: "
                            "queues), or a single rx_pcap that worker 0 dispatches by flow");
    }
    if (mode != host_steering::software && _host->can_rss(_n)) {
        plan.rx_queues = _n;
        plan.rss = true;
        return;
    }
    if (mode == host_steering::rss) {
        throw startup_error("steering.host: rss: port " + _host->role() + " (" + _host->driver() + ") cannot hash " +
                            "over " + std::to_string(_n) + " RX queues (max_rx_queues " +
                            std::to_string(_host->info().max_rx_queues) + ", RSS types " +
                            hex(_host->info().flow_type_rss_offloads) + "); use steering.host: software or auto");
    }
    _host_dispatch = true;
}

void instance::start_fabric()
{
    const std::string& name = _config.name;
    const std::string role = name == "laps" ? "fabric" : name + ".fabric";
    const int socket = static_cast<int>(rte_lcore_to_socket_id(_lcores.front()));
    queue_plan plan;
    plan.tx_queues = _n;
    if (_config.fabric.link) {
        std::vector<rte_ring*> rx;
        std::vector<rte_ring*> tx;
        for (std::uint16_t i = 0; i < _n; ++i) {
            _link_rx.push_back(make_mbuf_ring(name + "_lrx" + std::to_string(i), _link_ring_size, socket));
            _link_tx.push_back(make_mbuf_ring(name + "_ltx" + std::to_string(i), _link_ring_size, socket));
            rx.push_back(_link_rx.back().get());
            tx.push_back(_link_tx.back().get());
        }
        _fabric = std::make_unique<port>(role, "net_ring_" + name, rx, tx);
        plan.rx_queues = _n;
        _fabric->start(plan, _config.fabric.rx_desc, _config.fabric.tx_desc, _packet_pool.get());
        log_line("port " + role + ": " + describe(*_fabric) +
                 "; steering: the emulated link delivers by steering tag (tag % workers)");
        return;
    }
    _fabric = std::make_unique<port>(role, _config.fabric);
    if (_n == 1) {
        _fabric->start(plan, _config.fabric.rx_desc, _config.fabric.tx_desc, _packet_pool.get());
        log_line("port " + role + ": " + describe(*_fabric) + "; steering: one worker, one queue");
        return;
    }
    const auto mode = _config.steering.fabric;
    if (mode == fabric_steering::queues) {
        if (_fabric->info().max_rx_queues < _n) {
            throw startup_error("steering.fabric: queues: port " + role + " (" + _fabric->driver() + ") has " +
                                std::to_string(_fabric->info().max_rx_queues) + " RX queue(s) for " +
                                std::to_string(_n) + " workers");
        }
        plan.rx_queues = _n;
        _fabric->start(plan, _config.fabric.rx_desc, _config.fabric.tx_desc, _packet_pool.get());
        _fabric_queues = true;
        log_line("port " + role + ": " + describe(*_fabric) +
                 "; steering: queues: worker i reads RX queue i, the device delivers by steering tag % " +
                 std::to_string(_n) + " (packets it gets wrong are counted: fabric_rx_wrong_worker)");
        return;
    }
    std::string why = "steering.fabric: software";
    if (mode != fabric_steering::software) {
        if (_fabric->info().max_rx_queues >= _n) {
            plan.rx_queues = _n;
            _fabric->start(plan, _config.fabric.rx_desc, _config.fabric.tx_desc, _packet_pool.get());
            const auto rules = build_fabric_rules(_config.outer.udp_port, _tag_bits, _n);
            if (_rules.install(_fabric->id(), rules, why)) {
                log_line("port " + role + ": " + describe(*_fabric) + "; steering: rte_flow, " +
                         std::to_string(_rules.size()) + " rules (udp dst " + std::to_string(_config.outer.udp_port) +
                         ", src port tag mask " + hex(tag_mask(_tag_bits)) + " -> queue tag % " +
                         std::to_string(_n) + ")");
                return;
            }
        } else {
            why = "the port has " + std::to_string(_fabric->info().max_rx_queues) + " RX queue(s) for " +
                  std::to_string(_n) + " workers";
        }
        if (mode == fabric_steering::rte_flow) {
            throw startup_error("steering.fabric: rte_flow: port " + role + " (" + _fabric->driver() +
                                "): " + why + "; use steering.fabric: software or auto");
        }
    }
    plan.rx_queues = 1;
    _fabric->start(plan, _config.fabric.rx_desc, _config.fabric.tx_desc, _packet_pool.get());
    _fabric_dispatch = true;
    log_line("port " + role + ": " + describe(*_fabric) +
             "; steering: software (worker 0 dispatches LAPS packets by steering tag); rte_flow not used: " + why);
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

void instance::check_mtu()
{
    // The fabric MTU: the config's, else what the fabric port reports.
    std::uint16_t reported = 0;
    const bool from_port = !_config.outer.mtu && rte_eth_dev_get_mtu(_fabric->id(), &reported) == 0 && reported != 0;
    _fabric_mtu = _config.outer.mtu.value_or(from_port ? reported : 1500);
    std::uint16_t host_mtu = 1500;
    rte_eth_dev_get_mtu(_host->id(), &host_mtu);
    // A DATA packet is the host frame (MTU + 14) plus 42 bytes of outer
    // headers and 28 + 4 x anchors of LAPS header: at most MTU + 86 bytes
    // of outer IP packet (docs/pipeline.md "MTU sizing").
    const unsigned largest = _fabric_mtu - static_cast<unsigned>(wire::max_overhead);
    log_line("mtu: fabric " + std::to_string(_fabric_mtu) +
             (_config.outer.mtu ? " (outer.mtu)" : from_port ? " (fabric port)" : " (default)") +
             ": host frames up to MTU " + std::to_string(largest) + " are encapsulated with any anchors");
    host_mtu = settle_host_mtu(host_mtu, largest);
    if (host_mtu + wire::max_overhead > _fabric_mtu) {
        const bool pass = _config.engine.oversize == pipeline::oversize_policy::pass;
        log_line("warning: " + _config.name + ": host MTU " + std::to_string(host_mtu) + " + " +
                 std::to_string(wire::max_overhead) + " bytes of LAPS encapsulation exceeds the fabric MTU " +
                 std::to_string(_fabric_mtu) + ": full-size host frames will be " +
                 (pass ? "sent unencapsulated (host_passthrough_oversize)" : "dropped (host_drop_oversize)") +
                 "; set outer.mtu to " + std::to_string(host_mtu + wire::max_overhead) +
                 " (and the fabric's MTU), or the hosts' MTU to " + std::to_string(largest) + " or less");
    }
}

std::uint16_t instance::settle_host_mtu(std::uint16_t current, unsigned largest)
{
    const std::int32_t mode = _config.host.mtu;
    if (mode < 0) {
        log_line("mtu: host port " + std::to_string(current) + " (ports.host.mtu: keep)");
        return current;
    }
    unsigned want = mode > 0 ? static_cast<unsigned>(mode) : largest;
    std::string why = mode > 0 ? "ports.host.mtu" : "ports.host.mtu: auto, the fabric MTU - " +
                                                        std::to_string(wire::max_overhead);
    if (mode == 0) {
        // A host frame is received into one mbuf: auto goes no higher than
        // the packet pool's data room holds (a VLAN tag included).
        const unsigned room = _config.mempool.data_room - RTE_PKTMBUF_HEADROOM - RTE_ETHER_HDR_LEN - RTE_VLAN_HLEN;
        if (want > room) {
            want = room;
            why += ", capped by mempool.data_room " + std::to_string(_config.mempool.data_room);
        }
    }
    if (want == current) {
        log_line("mtu: host port " + std::to_string(current) + " (" + why + ")");
        return current;
    }
    const int rc = rte_eth_dev_set_mtu(_host->id(), static_cast<std::uint16_t>(want));
    if (rc != 0) {
        // Said once: here when the port's MTU fits anyway, else in the
        // warning that follows.
        log_line("mtu: host port " + std::to_string(current) + " (" + _host->driver() + " cannot set MTU " +
                 std::to_string(want) + ": " + rte_strerror(-rc) + ")");
        return current;
    }
    log_line("mtu: host port set from " + std::to_string(current) + " to " + std::to_string(want) + " (" + why + ")");
    return static_cast<std::uint16_t>(want);
}

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
        e.epoch = process_epoch();
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
