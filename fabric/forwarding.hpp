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
#include <map>
#include <span>
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
    // Where toward(at, target) reads its answer, for a prefetch; null
    // before the first lookup toward `target` made its row.
    const port_id* toward_slot(topology::node_id at, topology::node_id target) const noexcept
    {
        return target < _next.size() && !_next[target].empty() ? &_next[target][at] : nullptr;
    }

    // The port from `at` to its neighbour `peer`.
    port_id port_to(topology::node_id at, topology::node_id peer) const;

    // One port of the ECMP group of `at` toward host `dst`, chosen by `hash`
    // among those for which usable(port) holds; no_port when none is.
    template <typename Usable>
    port_id ecmp(topology::node_id at, topology::node_id dst, std::uint32_t hash, Usable&& usable)
    {
        const std::span<const port_id> group = ecmp_group(at, dst);
        // The (hash mod usable)-th usable member: a switch rebuilds its group
        // without the failed links, which may move other flows too.
        std::uint32_t n = 0;
        for (const port_id p : group) {
            n += usable(p) ? 1 : 0;
        }
        if (n == 0) {
            return no_port;
        }
        std::uint32_t pick = hash % n;
        for (const port_id p : group) {
            if (usable(p)) {
                if (pick == 0) {
                    return p;
                }
                --pick;
            }
        }
        return no_port;
    }

    // The ECMP group of `at` toward `dst`: its ports in routing's order.
    std::span<const port_id> ecmp_group(topology::node_id at, topology::node_id dst);

private:
    struct group_span {
        std::uint32_t offset = 0;
        std::uint32_t count = 0;
    };

    const topology::fabric& _fabric;
    const topology::routing& _routing;
    // Per target node: the output port of every node toward it (rows made on
    // first use; unknown = unset_port).
    std::vector<std::vector<port_id>> _next;
    // Per node: the ECMP group toward every node, as an index into _groups
    // (rows made on first use). A fabric has few distinct groups (in a fat
    // tree, a switch's up-links serve most destinations), so they are kept
    // once each: _group_ids finds a group's index when a row entry is made.
    std::vector<std::vector<std::uint32_t>> _ecmp_rows;
    std::vector<group_span> _groups;
    std::vector<port_id> _group_ports;
    std::map<std::vector<port_id>, std::uint32_t> _group_ids;
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
