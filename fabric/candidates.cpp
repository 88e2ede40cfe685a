#include "fabric/candidates.hpp"

#include <algorithm>

namespace laps::fabric {

namespace {

std::uint64_t mix64(std::uint64_t x) noexcept
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

} // namespace

candidate_catalog::candidate_catalog(const topology::fabric& f, const std::vector<host_info>& hosts,
                                     forwarding& routes, const std::vector<port>& ports)
    : _hosts(hosts), _routes(routes), _ports(ports)
{
    const std::size_t n = f.host_count();
    // A rail GPU's NIC reaches NVLink and rail directly: it is its own ToR.
    _tor.resize(n);
    for (std::size_t h = 0; h < n; ++h) {
        const auto nb = f.neighbours(static_cast<topology::node_id>(h));
        _tor[h] = nb.size() == 1 && !f.is_host(nb[0].peer) ? nb[0].peer : static_cast<topology::node_id>(h);
    }
    for (std::size_t h = 0; h < n; ++h) {
        const auto& pst = hosts[h].table.pst;
        for (std::size_t r = 0; r < pst.size(); ++r) {
            if (const auto dst = f.host_by_address(pst[r].destination)) {
                _pst_row.emplace(pair_key(static_cast<topology::node_id>(h), *dst), static_cast<std::int32_t>(r));
            }
        }
    }
}

const candidate_set& candidate_catalog::of(topology::node_id src, topology::node_id dst)
{
    auto& slot = _sets[pair_key(src, dst)];
    if (slot) {
        return *slot;
    }
    slot = std::make_unique<candidate_set>();
    const auto found = _pst_row.find(pair_key(src, dst));
    if (found == _pst_row.end()) {
        return *slot; // no candidates: shortest path
    }
    const std::int32_t row = found->second;
    if (_pit_row.empty()) {
        _pit_row.resize(_hosts.size());
    }
    auto& pit_index = _pit_row[src];
    const auto& table = _hosts[src].table;
    if (pit_index.empty()) {
        std::uint32_t pids = 1;
        for (const auto& r : table.pit) {
            pids = std::max<std::uint32_t>(pids, r.pid + 1u);
        }
        pit_index.assign(pids, -1);
        for (std::size_t r = 0; r < table.pit.size(); ++r) {
            pit_index[table.pit[r].pid] = static_cast<std::int32_t>(r);
        }
    }
    time_ns slowest = 0;
    for (const auto pid : table.pst[static_cast<std::size_t>(row)].pids) {
        if (pid >= pit_index.size() || pit_index[pid] < 0) {
            continue;
        }
        const auto& r = table.pit[static_cast<std::size_t>(pit_index[pid])];
        if (!r.valid) {
            continue;
        }
        candidate c;
        c.pid = r.pid;
        c.hops = r.hop_count;
        c.anchor_count = r.anchor_count;
        std::uint64_t key = mix64((std::uint64_t{_tor[src]} << 32) | _tor[dst]);
        for (std::size_t a = 0; a < r.anchor_count; ++a) {
            c.anchors[a] = static_cast<topology::node_id>(r.anchors[a]);
            key = mix64(key ^ (r.anchors[a] + 0x9e3779b97f4a7c15ULL));
        }
        // ToR-level paths of two hosts under the same pair of ToRs share a key
        // when their anchors agree (dragonfly); a rail GPU is its own ToR.
        c.route = key;
        c.uncongested_ns = r.uncongested_ns;
        c.ports = route_ports(_tor[src], c, dst);
        slowest = std::max(slowest, static_cast<time_ns>(r.uncongested_ns));
        slot->paths.push_back(c);
    }
    slot->base_rtt_ns = 2 * slowest;
    return *slot;
}

std::vector<port_id> candidate_catalog::route_ports(topology::node_id from, const candidate& c,
                                                    topology::node_id dst) const
{
    // The switches' forwarding of a packet with these anchors, walked from `from`.
    std::vector<port_id> out;
    std::size_t a = 0;
    topology::node_id at = from;
    for (int hop = 0; hop < 64 && at != dst; ++hop) {
        while (a < c.anchor_count && c.anchors[a] == at) {
            ++a;
        }
        const port_id p = _routes.toward(at, a < c.anchor_count ? c.anchors[a] : dst);
        if (p == no_port) {
            break;
        }
        out.push_back(p);
        at = _ports[p].to;
    }
    return out;
}

} // namespace laps::fabric
