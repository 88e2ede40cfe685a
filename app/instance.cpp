#include "app/instance.hpp"

#include "app/errors.hpp"
#include "app/log.hpp"
#include "app/steering.hpp"

#include <rte_launch.h>
#include <rte_lcore.h>

#include <cstdio>

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
                   common::time_ns drain_ns, std::uint32_t link_ring_size, const clock& clk,
                   const std::atomic<bool>& stop, const std::atomic<bool>& paused)
    : _config(config), _lcores(std::move(lcores)), _n(static_cast<std::uint16_t>(_lcores.size())),
      _link_ring_size(link_ring_size)
{
    const std::string& name = _config.name;
    _tag_bits = _config.steering.tag_bits.value_or(tag_bits_for(_n));
    if ((1u << _tag_bits) < _n) {
        throw startup_error("steering.tag_bits: " + std::to_string(_tag_bits) + " bits cannot tell " +
                            std::to_string(_n) + " workers apart (need " + std::to_string(tag_bits_for(_n)) + ")");
    }
    for (const auto& row : _config.engine.algo.paths.pst) {
        for (const auto pid : row.pids) {
            if (_tracked.size() < published_paths) {
                _tracked.push_back(pid);
            }
        }
    }

    const int socket = static_cast<int>(rte_socket_id());
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
    const char* host_mode = _n == 1 ? "one worker, one queue"
                            : host_plan.rss ? "RSS over IP/UDP/TCP, one queue per worker"
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
    for (const port* p : {_host.get(), _fabric.get()}) {
        if (!p->multi_seg_tx()) {
            log_line("port " + p->role() + ": " + p->driver() +
                     " does not advertise multi-segment TX; LAPS DATA packets are 2-segment chains, which "
                     "net_null/net_ring/net_pcap/net_tap handle in software");
        }
    }
    try {
        make_workers(clk, idle, drain_ns, stop, paused);
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
    const int socket = static_cast<int>(rte_socket_id());
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
                 "; steering: the emulated link delivers by entropy tag (tag % workers)");
        return;
    }
    _fabric = std::make_unique<port>(role, _config.fabric);
    if (_n == 1) {
        _fabric->start(plan, _config.fabric.rx_desc, _config.fabric.tx_desc, _packet_pool.get());
        log_line("port " + role + ": " + describe(*_fabric) + "; steering: one worker, one queue");
        return;
    }
    const auto mode = _config.steering.fabric;
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
             "; steering: software (worker 0 dispatches LAPS packets by entropy tag); rte_flow not used: " + why);
}

void instance::make_workers(const clock& clk, idle_mode idle, common::time_ns drain_ns,
                            const std::atomic<bool>& stop, const std::atomic<bool>& paused)
{
    wire::outer_config outer;
    outer.own_mac = _config.outer.mac.value_or(_fabric->mac());
    outer.next_hop_mac = _config.outer.next_hop_mac;
    outer.own_ip = *_config.outer.ip;
    outer.udp_port = _config.outer.udp_port;
    outer.ttl = _config.outer.ttl;
    outer.mtu = _config.outer.mtu;

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
    for (std::uint16_t i = 0; i < _n; ++i) {
        pipeline::engine_config e = _config.engine;
        e.name = _config.name + "_w" + std::to_string(i);
        e.outer = outer;
        e.entropy_tag_bits = _tag_bits;
        e.entropy_tag = i;
        e.control_pool = _control_pool.get();
        // Each worker gets an even share of the port's rate limit.
        e.port_rate_bps = _config.engine.port_rate_bps / _n;

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

        _published.push_back(std::make_unique<published_stats>());
        _workers.push_back(std::make_unique<worker>(e, std::move(io), clk, _config.burst, idle, drain_ns, _tracked,
                                                    stop, paused, *_published.back()));
    }
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
             std::to_string(_config.engine.algo.paths.pit.size()) + " paths, entropy tag bits " +
             std::to_string(_tag_bits));
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
