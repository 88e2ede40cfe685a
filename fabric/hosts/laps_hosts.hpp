#pragma once
// The hosts of the laps scheme: on every host the real LAPS engine
// (pipeline::engine, unchanged), its clock the host's:
//
//   flows ─frames─► engine ─mbuf chains─► fabric ... ─► linear copy, like a NIC ─► engine ─► frames counted
//
// Flows hand their host frames to the engine while it takes them; whatever
// the engine sends enters the fabric as a packet record holding its mbuf
// chain; a packet that reaches its host is copied into the receive pool (the
// NIC's DMA) and given to that host's engine.

#include "fabric/hosts/transport.hpp"
#include "fabric/huge_pages.hpp"
#include "fabric/simulation.hpp"
#include "pipeline/engine.hpp"

#include <rte_mbuf.h>

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <unordered_map>
#include <vector>

namespace laps::fabric::hosts {

// An engine placed in the hosts' arena (laps_hosts::_engine_memory): ended
// here, its memory goes back with the arena's.
struct engine_in_arena {
    void operator()(pipeline::engine* e) const noexcept { std::destroy_at(e); }
};

// One host's engine and the frames waiting for it. Hosts with no flow, as
// sender or receiver, have no engine.
struct engine_host {
    std::unique_ptr<pipeline::engine, engine_in_arena> engine;
    std::uint32_t sends = 0;    // flows it sends: its send flow slots, up to flow_capacity
    std::uint32_t receives = 0; // flows it receives: its receive flow slots, up to flow_capacity
    std::vector<std::uint32_t> sending; // flows with frames the engine has not taken, in start order
    // Whether a flow of `sending` may hand the engine a frame: set when a
    // flow starts, when one of its frames leaves the engine's flow queue and
    // when a walk stops short; a walk that fills every flow clears it. On a
    // large fabric most services have nothing to offer, and the walk would
    // read every sending flow's record for nothing.
    bool may_offer = false;
    time_ns wake_at = no_wake;          // the pending host_timer wake-up
    std::vector<rte_mbuf*> arrived;     // engine.rx_burst_us: packets waiting for their burst
    std::uint64_t frame_pool_waits = 0; // frames not made: host-frame pool empty
    std::uint64_t flow_table_waits = 0; // first frames refused: engine flow table full

    bool has_flows() const noexcept { return sends + receives > 0; }
};

class laps_hosts final : public transport {
public:
    // One engine per host with flows, configured from the scenario and sized
    // to its flows (engine_config.cpp).
    explicit laps_hosts(simulation& sim);

    // The mbuf pools a run of engines needs, from its flows.
    static pool_plan plan(const scenario& s, const std::vector<flow_spec>& flows);
    // The engines' flow-table size: tables.flow_capacity, else 256.
    static std::uint32_t flow_capacity(const scenario& s) noexcept;

    void start() override;
    void start_flow(flow& f) override;
    void flows_started() override;
    void deliver(std::uint32_t packet, topology::node_id host) override;
    void prefetch_delivery(topology::node_id host) const noexcept override;
    void on_timer(const event& e) override;
    bool reads_ecn() const noexcept override;
    std::span<const std::uint64_t> packets_per_path(topology::node_id h) const override;
    void release() override;

    bool has_engine(topology::node_id h) const { return _hosts.at(h).engine != nullptr; }
    // Throws std::logic_error for a host without an engine.
    const pipeline::engine& engine(topology::node_id h) const;
    const engine_host& at(topology::node_id h) const { return _hosts.at(h); }

private:
    pipeline::engine_config engine_config_for(const host_info& h) const;
    void service(engine_host& e, const host_info& h);
    bool drain_to_fabric(engine_host& e, const host_info& h);
    bool drain_to_host(engine_host& e, const host_info& h);
    bool pump(engine_host& e, const host_info& h);
    void inject(const host_info& h, rte_mbuf* m);
    void schedule_wake(engine_host& e, const host_info& h, time_ns retry_at = no_wake);
    // engine.rx_burst_us: the host's arrivals into its engine, as one burst.
    void take_arrivals(engine_host& e, const host_info& h);

    simulation& _sim;
    // Where every engine lives, with what it allocates (engine_config.memory):
    // on transparent huge pages, released with the hosts (fabric/huge_pages.hpp).
    // Declared before the engines, so that it outlives them; mutable: a
    // configuration (engine_config_for) hands it out to allocate from.
    fabric::huge_page_resource _engine_pages;
    mutable std::pmr::monotonic_buffer_resource _engine_memory{fabric::huge_page_bytes, &_engine_pages};
    // Every engine's flow tables in one pair of rte_hash (pipeline/flow_slots.hpp):
    // a process has 2,560 memzones and an engine's own tables take four.
    std::unique_ptr<pipeline::flow_index> _flow_index;
    std::vector<engine_host> _hosts;
    // Host by IPv4 address: by arithmetic when hosts are numbered in
    // address order from `_first_ip` (the default addresses), else the map.
    std::optional<topology::node_id> host_of(std::uint32_t ipv4) const noexcept;
    std::unordered_map<std::uint32_t, topology::node_id> _by_ip; // lookups only
    std::uint32_t _first_ip = 0;
    bool _ips_in_order = false;
    std::vector<rte_mbuf*> _burst;                                // drain buffer
    std::optional<pipeline::rx_timestamp> _rx_time;               // engine.rx_burst_us: arrival times
    std::vector<topology::node_id> _touched;                      // hosts given flows this instant
};

} // namespace laps::fabric::hosts
