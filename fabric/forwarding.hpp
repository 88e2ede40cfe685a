#pragma once
// Where a switch sends a packet next.
//
//  - LAPS packets follow their anchors (paper §III-B): best path to the next
//    anchor, and on reaching it the switch advances anchor_index; after the
//    last anchor, best path to the destination. topology::routing's best
//    paths are sub-path consistent, so hop-by-hop forwarding retraces the
//    source's expansion exactly.
//  - Plain packets are spread by a hash of their outer 5-tuple over the
//    ECMP group (every neighbour on some shortest path), skipping links that
//    are down.
//
// Routing is static: a LAPS packet whose next link is down is dropped; only
// LAPS itself (timeouts, probes) moves traffic off a failed path.

#include "fabric/link.hpp"
#include "topology/routing.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace laps::fabric {

class forwarding {
public:
    // Both must outlive this object.
    forwarding(const topology::fabric& f, const topology::routing& r);

    // The output port of `at` toward `target` on the best path; no_port when
    // at == target. Computed on first use and kept.
    port_id toward(topology::node_id at, topology::node_id target);

    // The port from `at` to its neighbour `peer`.
    port_id port_to(topology::node_id at, topology::node_id peer) const;

    // One port of the ECMP group of `at` toward host `dst`, chosen by `hash`
    // among those for which usable(port) holds; no_port when none is.
    port_id ecmp(topology::node_id at, topology::node_id dst, std::uint32_t hash,
                 const std::function<bool(port_id)>& usable);

private:
    const topology::fabric& _fabric;
    const topology::routing& _routing;
    // Per target node: the output port of every node toward it (rows made on
    // first use; unknown = unset_port).
    std::vector<std::vector<port_id>> _next;
    std::map<std::pair<topology::node_id, topology::node_id>, std::vector<port_id>> _ecmp;
};

// 32-bit mixer (MurmurHash3's finaliser): hashes of 5-tuples and salts.
constexpr std::uint32_t mix32(std::uint32_t h) noexcept
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

} // namespace laps::fabric
