#pragma once
// The candidate paths of a host pair as the RoCE NIC model's schemes see
// them (fabric/schemes/): the source host's PST/PIT from
// topology::path_planner, the same paths LAPS chooses among. A chosen path
// travels as source-routing anchors, as LAPS's do, so the switches forward
// every scheme's packets the same way.
//
// A host's ToR is its only switch, or the host itself when it has several
// links (a rail GPU: its NIC is its ToR, as in the LAPS authors' ns-3 model
// where each GPU sits behind its own NIC node). Schemes that decide at a
// switch decide when the packet reaches the sender's ToR.

#include "common/time.hpp"
#include "fabric/forwarding.hpp"
#include "fabric/host.hpp"
#include "fabric/link.hpp"
#include "tables/table_spec.hpp"
#include "topology/model.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace laps::fabric {

// One candidate path of a host pair, as the source's PIT has it.
struct candidate {
    std::uint16_t pid = 0;
    std::uint8_t hops = 0;
    std::uint8_t anchor_count = 0;
    std::array<topology::node_id, tables::max_anchors> anchors{};
    time_ns uncongested_ns = 0;
    // The path between the two ToRs, as a key: two host pairs under the same
    // two ToRs share it when their anchors agree (a switch's per-path state).
    std::uint64_t route = 0;
    std::vector<port_id> ports; // the links it crosses from the source ToR on
};

struct candidate_set {
    std::vector<candidate> paths;
    time_ns base_rtt_ns = 0; // round trip over the slowest candidate, idle fabric
};

class candidate_catalog {
public:
    // All must outlive the catalog.
    candidate_catalog(const topology::fabric& f, const std::vector<host_info>& hosts, forwarding& routes,
                      const std::vector<port>& ports);

    // The candidates from `src` to `dst` (none: the pair has no PST row and
    // takes the shortest path). Made on first use and kept.
    const candidate_set& of(topology::node_id src, topology::node_id dst);
    // The same for testbed flow `flow` from `src` to `dst`, through a dense
    // per-flow cache: one load where the pair's hash lookup costs a few cache
    // misses on a fabric of thousands of hosts.
    const candidate_set& of_flow(std::uint32_t flow, topology::node_id src, topology::node_id dst)
    {
        if (flow >= _by_flow.size()) {
            _by_flow.resize(flow + 1, nullptr);
        }
        const candidate_set*& cached = _by_flow[flow];
        if (cached == nullptr) {
            cached = &of(src, dst);
        }
        return *cached;
    }

    topology::node_id tor_of(topology::node_id host) const { return _tor.at(host); }

private:
    std::vector<port_id> route_ports(topology::node_id from, const candidate& c, topology::node_id dst) const;

    const std::vector<host_info>& _hosts;
    forwarding& _routes;
    const std::vector<port>& _ports;
    // Host pairs as one key: src << 32 | dst.
    static std::uint64_t pair_key(topology::node_id src, topology::node_id dst) noexcept
    {
        return (std::uint64_t{src} << 32) | dst;
    }

    std::vector<topology::node_id> _tor; // per host
    // Per pair that talks (a PST row), not per pair of hosts: thousands of
    // hosts would make n^2 entries (docs/testbed.md, "Memory and scale").
    std::unordered_map<std::uint64_t, std::int32_t> _pst_row;        // pair -> row of the source's PST
    std::vector<std::vector<std::int32_t>> _pit_row;                  // per host: pid -> row of its PIT (made on first use)
    std::unordered_map<std::uint64_t, std::unique_ptr<candidate_set>> _sets; // pair -> candidates, made on first use
    std::vector<const candidate_set*> _by_flow;                              // of_flow's cache (sets never move)
};

} // namespace laps::fabric
