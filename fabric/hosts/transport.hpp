#pragma once
// What every host of a run runs (the scheme's registry row says which): the
// LAPS engine (laps_hosts.hpp) or the RoCEv2 NIC model (roce_hosts.hpp). The
// simulation owns the fabric (links, queues, buffers, the event loop) and
// talks to the hosts only through this interface; a transport sends by
// putting packet records into the fabric (simulation::forward).

#include "fabric/event_queue.hpp"
#include "fabric/flow.hpp"
#include "topology/model.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace laps::fabric::hosts {

class transport {
public:
    virtual ~transport() = default;

    // The run starts (its first events are scheduled): arm periodic timers.
    virtual void start() {}
    // Flow `f`'s start time has come; flows_started() follows every batch of
    // flows due at the same time.
    virtual void start_flow(flow& f) = 0;
    virtual void flows_started() {}
    // Packet record `packet` reached its destination host `host`; the
    // transport takes it (and releases the record).
    virtual void deliver(std::uint32_t packet, topology::node_id host) = 0;
    // A packet will reach `host` a few events from now: ask the cache for
    // what deliver() will read first (the event loop's prefetch).
    virtual void prefetch_delivery(topology::node_id /*host*/) const noexcept {}
    // One of its own timers (event_kind::host_timer).
    virtual void on_timer(const event& e) = 0;
    // A port of host `host` finished sending a packet (a NIC may pull the next).
    virtual void on_port_free(topology::node_id /*host*/) {}
    // Whether its senders read ECN echoes (the fabric then marks by default).
    virtual bool reads_ecn() const noexcept = 0;
    // DATA packets host `h` sent per PIT path id (Fig. 19).
    virtual std::span<const std::uint64_t> packets_per_path(topology::node_id h) const = 0;
    // The run ends: free every mbuf and record the hosts hold.
    virtual void release() {}
};

} // namespace laps::fabric::hosts
