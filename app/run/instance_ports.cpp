// The instance's ports: how each is steered (docs/app.md "Lcores and
// steering") and the MTUs they get (docs/app.md "Host frames").
#include "app/run/instance.hpp"

#include "app/errors.hpp"
#include "app/log.hpp"
#include "app/ports/steering.hpp"

#include <rte_errno.h>
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

void instance::start_host(int socket)
{
    const std::string& name = _config.name;
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
    // of outer IP packet, 106 with the authentication trailer
    // (docs/pipeline.md "MTU sizing").
    const unsigned overhead = encapsulation_overhead();
    const unsigned largest = _fabric_mtu - overhead;
    log_line("mtu: fabric " + std::to_string(_fabric_mtu) +
             (_config.outer.mtu ? " (outer.mtu)" : from_port ? " (fabric port)" : " (default)") +
             ": host frames up to MTU " + std::to_string(largest) + " are encapsulated with any anchors");
    host_mtu = settle_host_mtu(host_mtu, largest);
    if (host_mtu + overhead > _fabric_mtu) {
        const bool pass = _config.engine.oversize == pipeline::oversize_policy::pass;
        log_line("warning: " + _config.name + ": host MTU " + std::to_string(host_mtu) + " + " +
                 std::to_string(overhead) + " bytes of LAPS encapsulation exceeds the fabric MTU " +
                 std::to_string(_fabric_mtu) + ": full-size host frames will be " +
                 (pass ? "sent unencapsulated (host_passthrough_oversize)" : "dropped (host_drop_oversize)") +
                 "; set outer.mtu to " + std::to_string(host_mtu + overhead) +
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
                                                        std::to_string(encapsulation_overhead());
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

} // namespace laps::app
