#include "app/ports/ports.hpp"

#include "app/errors.hpp"

#include <rte_bus_vdev.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_log.h>

#include <array>
#include <cstring>

namespace laps::app {

namespace {

std::string vdev_name(const std::string& devargs)
{
    return devargs.substr(0, devargs.find(','));
}

bool is_vdev(const std::string& devargs)
{
    return devargs.rfind("net_", 0) == 0 || devargs.rfind("eth_", 0) == 0;
}

std::string err(int rc)
{
    return rte_strerror(rc < 0 ? -rc : rc);
}

} // namespace

port::port(std::string role, const port_config& config) : _role(std::move(role))
{
    const std::string& devargs = config.devargs;
    if (is_vdev(devargs)) {
        _name = vdev_name(devargs);
        std::uint16_t existing = 0;
        if (rte_eth_dev_get_port_by_name(_name.c_str(), &existing) == 0) {
            // Given to EAL with --vdev already.
            _id = existing;
        } else {
            const std::string args = devargs.size() > _name.size() ? devargs.substr(_name.size() + 1) : "";
            const int rc = rte_vdev_init(_name.c_str(), args.c_str());
            if (rc != 0) {
                throw startup_error("port " + _role + ": cannot create '" + devargs + "': " + err(rc) +
                                    " (check the driver name and its arguments; the PMD's log line above says more)");
            }
            _created_vdev = true;
            if (rte_eth_dev_get_port_by_name(_name.c_str(), &_id) != 0) {
                rte_vdev_uninit(_name.c_str());
                _created_vdev = false;
                throw startup_error("port " + _role + ": '" + devargs + "' created no ethdev port");
            }
        }
    } else {
        _name = devargs;
        if (rte_eth_dev_get_port_by_name(_name.c_str(), &_id) != 0) {
            throw startup_error("port " + _role + ": no ethdev named '" + devargs +
                                "': give a vdev (net_null0, net_pcap0,rx_pcap=F, net_tap0,iface=X) or a PCI "
                                "address that EAL probed (-a " + devargs + ", bound to vfio-pci)");
        }
    }
    load_info();
}

port::port(std::string role, const std::string& name, const std::vector<rte_ring*>& rx,
           const std::vector<rte_ring*>& tx)
    : _role(std::move(role)), _name(name)
{
    const int id = rte_eth_from_rings(name.c_str(), rx.data(), static_cast<unsigned>(rx.size()), tx.data(),
                                      static_cast<unsigned>(tx.size()), static_cast<unsigned>(rte_socket_id()));
    if (id < 0) {
        throw startup_error("port " + _role + ": cannot make net_ring port '" + name + "': " +
                            rte_strerror(rte_errno));
    }
    _id = static_cast<std::uint16_t>(id);
    _created_vdev = true;
    load_info();
}

void port::load_info()
{
    const int rc = rte_eth_dev_info_get(_id, &_info);
    if (rc != 0) {
        throw startup_error("port " + _role + " (" + _name + "): rte_eth_dev_info_get: " + err(rc));
    }
    _driver = _info.driver_name != nullptr ? _info.driver_name : "?";
}

port::~port()
{
    // net_ring keeps in-flight mbufs in its rings (a loop-back net_ring vdev
    // sends into its own RX ring) and does not free them at close.
    if (_started && _driver == "net_ring") {
        std::array<rte_mbuf*, 64> pkts;
        for (std::uint16_t q = 0; q < _plan.rx_queues; ++q) {
            std::uint16_t n;
            while ((n = rte_eth_rx_burst(_id, q, pkts.data(), pkts.size())) > 0) {
                rte_pktmbuf_free_bulk(pkts.data(), n);
            }
        }
    }
    if (_started) {
        rte_eth_dev_stop(_id);
    }
    rte_eth_dev_close(_id);
    if (_created_vdev) {
        // Removes the device; a no-op for ports the close released (net_pcap
        // closes its files here at the latest).
        rte_vdev_uninit(_name.c_str());
    }
}

int port::socket() const noexcept
{
    const int s = rte_eth_dev_socket_id(_id);
    return s < 0 ? static_cast<int>(rte_socket_id()) : s;
}

bool port::can_rss(std::uint16_t queues) const noexcept
{
    constexpr std::uint64_t wanted = RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP;
    return queues <= _info.max_rx_queues && (_info.flow_type_rss_offloads & wanted) != 0;
}

void port::start(const queue_plan& plan, std::uint16_t rx_desc, std::uint16_t tx_desc, rte_mempool* pool)
{
    const std::string who = "port " + _role + " (" + _name + ", " + _driver + ")";
    if (_started) {
        // Reconfiguring (rte_flow fell through): the port must be stopped.
        rte_eth_dev_stop(_id);
        _started = false;
    }
    if (plan.rx_queues > _info.max_rx_queues) {
        throw startup_error(who + " has " + std::to_string(_info.max_rx_queues) + " RX queues; laps needs " +
                            std::to_string(plan.rx_queues) + " (one per worker with RSS/rte_flow, else 1)");
    }
    if (plan.tx_queues > _info.max_tx_queues) {
        throw startup_error(who + " has " + std::to_string(_info.max_tx_queues) + " TX queues; laps needs one per " +
                            "worker (" + std::to_string(plan.tx_queues) +
                            "): use fewer workers, or a device with more queues (net_pcap: one tx_pcap= per queue)");
    }
    rte_eth_conf conf{};
    if (plan.rss) {
        conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
        conf.rx_adv_conf.rss_conf.rss_hf =
            (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP) & _info.flow_type_rss_offloads;
    }
    // Some LAPS DATA packets are 2-segment chains (header mbuf + host frame):
    // resends while an earlier copy is in flight, host frames short of headroom.
    if (multi_seg_tx()) {
        conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    }
    int rc = rte_eth_dev_configure(_id, plan.rx_queues, plan.tx_queues, &conf);
    if (rc != 0) {
        throw startup_error(who + ": rte_eth_dev_configure(" + std::to_string(plan.rx_queues) + " rx, " +
                            std::to_string(plan.tx_queues) + " tx): " + err(rc));
    }
    std::uint16_t nb_rx = rx_desc;
    std::uint16_t nb_tx = tx_desc;
    rc = rte_eth_dev_adjust_nb_rx_tx_desc(_id, &nb_rx, &nb_tx);
    if (rc != 0) {
        throw startup_error(who + ": rte_eth_dev_adjust_nb_rx_tx_desc: " + err(rc));
    }
    const auto sock = static_cast<unsigned>(socket());
    for (std::uint16_t q = 0; q < plan.rx_queues; ++q) {
        rc = rte_eth_rx_queue_setup(_id, q, nb_rx, sock, nullptr, pool);
        if (rc != 0) {
            throw startup_error(who + ": RX queue " + std::to_string(q) + ": " + err(rc) +
                                (rc == -ENOMEM ? " (mempool too small for the RX rings? raise mempool.mbufs)" : ""));
        }
    }
    rte_eth_txconf txconf = _info.default_txconf;
    txconf.offloads = conf.txmode.offloads;
    for (std::uint16_t q = 0; q < plan.tx_queues; ++q) {
        rc = rte_eth_tx_queue_setup(_id, q, nb_tx, sock, &txconf);
        if (rc != 0) {
            throw startup_error(who + ": TX queue " + std::to_string(q) + ": " + err(rc));
        }
    }
    rc = rte_eth_dev_start(_id);
    if (rc != 0) {
        throw startup_error(who + ": rte_eth_dev_start: " + err(rc) +
                            " (net_pcap: can the pcap files be opened? net_tap: are you root?)");
    }
    _started = true;
    _plan = plan;
    // Host frames are addressed to the host's peers, not to this port.
    rte_eth_promiscuous_enable(_id);
}

wire::mac_address port::mac() const
{
    rte_ether_addr a{};
    rte_eth_macaddr_get(_id, &a);
    wire::mac_address out{};
    std::memcpy(out.data(), a.addr_bytes, out.size());
    return out;
}

} // namespace laps::app
