#pragma once
// One ethdev port with one owner: opened (a vdev created from its devargs, a
// device EAL already probed looked up by name, or a net_ring port made from
// rings for the emulated link), configured with queues, started; stopped,
// closed and, for vdevs it created, removed when the owner goes.

#include "app/config/config.hpp"

#include <rte_ethdev.h>

#include <cstdint>
#include <string>
#include <vector>

struct rte_ring;
struct rte_mempool;

namespace laps::app {

struct queue_plan {
    std::uint16_t rx_queues = 1;
    std::uint16_t tx_queues = 1;
    bool rss = false; // hash IP/UDP/TCP over the RX queues
};

class port {
public:
    // `role` names the port in messages ("host", "fabric", "a.fabric").
    // Throws startup_error when the device cannot be created or found.
    port(std::string role, const port_config& config);
    // A net_ring port over the caller's rings (which must outlive it).
    port(std::string role, const std::string& name, const std::vector<rte_ring*>& rx,
         const std::vector<rte_ring*>& tx);
    ~port();
    port(const port&) = delete;
    port& operator=(const port&) = delete;

    std::uint16_t id() const noexcept { return _id; }
    const std::string& role() const noexcept { return _role; }
    const std::string& name() const noexcept { return _name; }
    const std::string& driver() const noexcept { return _driver; }
    const rte_eth_dev_info& info() const noexcept { return _info; }
    int socket() const noexcept;

    bool can_rss(std::uint16_t queues) const noexcept;
    bool multi_seg_tx() const noexcept { return (_info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0; }

    // Configures the queues (RX from `pool`) and starts the port. Throws
    // startup_error naming the port and the failing step.
    void start(const queue_plan& plan, std::uint16_t rx_desc, std::uint16_t tx_desc, rte_mempool* pool);
    const queue_plan& plan() const noexcept { return _plan; }

    wire::mac_address mac() const;

private:
    void load_info();

    std::string _role;
    std::string _name;
    std::string _driver;
    std::uint16_t _id = 0;
    bool _created_vdev = false;
    bool _started = false;
    rte_eth_dev_info _info{};
    queue_plan _plan;
};

} // namespace laps::app
