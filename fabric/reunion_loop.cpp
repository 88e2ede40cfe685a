// Reunion (seed 000, §3): switch-side rerouting of elephant flows that
// collide on a link.
//   source switch  classifies flows with a Count-Min Sketch (§3.2) and marks
//                  elephants' packets; keeps each flow on its path (ECMP at
//                  first) until told to move it;
//   every hop      but the destination switch writes the first link where
//                  more than t elephants met in this interval into the
//                  packet's bottleneck field (§3.3);
//   destination    records elephants' paths and bottleneck links; at the end
//   switch         of each interval s sends one notification per bottleneck
//                  link, naming the last flow marked there and the links
//                  carrying more than t elephants (Algorithm 1);
//   source switch  at the end of the interval moves each notified flow to the
//                  first path whose links all carry fewer than t of its
//                  elephants, notified links counting as full (Algorithm 2).
// Links into a host are left out of the tables: every path of a flow ends
// on its receiver's link, and elephants meeting there are an in-cast, which
// no path choice resolves.
#include "fabric/flow_generator.hpp"
#include "fabric/simulation.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace laps::fabric {

void simulation::reunion_setup()
{
    const auto nodes = _scenario.topology->node_count();
    _reunion.flows.assign(_flows.size(), reunion_flow{});
    _reunion.sketch.resize(nodes);
    _reunion.elephants.resize(nodes);
    _reunion.avoid.resize(nodes);
    _reunion.dest.resize(nodes);
    _reunion_port_flows.resize(_ports.size());
    _events.push(_scenario.roce.reunion.interval_ns, event_kind::lb_tick, 0, lb_tick_reunion);
}

std::uint16_t simulation::reunion_source(packet& k, topology::node_id at, const candidate_set& cs)
{
    const auto& p = _scenario.roce.reunion;
    const auto n = static_cast<std::uint32_t>(cs.paths.size());
    auto& rf = _reunion.flows[k.flow];
    if (!rf.seen) {
        rf.seen = true;
        rf.path = static_cast<std::uint16_t>(mix32(k.hash ^ _nodes[at].ecmp_salt) % n);
    }
    if (!rf.elephant) {
        auto& sketch = _reunion.sketch[at];
        if (!sketch) {
            sketch.emplace(p.cms_depth, p.cms_width, stream_seed(_seed, streams::lb, at));
        }
        if (sketch->add(k.hash, k.bytes) >= p.elephant_bytes) {
            rf.elephant = true;
            _reunion.elephants[at].push_back(k.flow);
            ++_roce.reunion_elephants;
        }
    }
    k.elephant = rf.elephant;
    return static_cast<std::uint16_t>(rf.path % n);
}

void simulation::reunion_hop(packet& k, port_id out)
{
    const auto to = _ports[out].to;
    if (_scenario.topology->is_host(to)) {
        return; // the destination switch's link to the host: not a collision link
    }
    auto& seen = _reunion_port_flows[out];
    if (std::find(seen.begin(), seen.end(), k.flow) == seen.end()) {
        seen.push_back(k.flow);
    }
    if (seen.size() > _scenario.roce.reunion.tolerance && k.bottleneck == no_port) {
        k.bottleneck = out; // the first collision on the way is the one to fix first
        ++_roce.reunion_marks;
    }
}

void simulation::reunion_dest(const packet& k, topology::node_id at)
{
    if (!k.elephant) {
        return;
    }
    auto& table = _reunion.dest[at];
    table.elephants[k.flow] = k.pid;
    if (k.bottleneck != no_port) {
        table.bottlenecks[k.bottleneck] = k.flow;
    }
}

namespace {

// The candidate index of PIT path `pid` in a candidate set.
std::int32_t index_of(const candidate_set& cs, std::uint16_t pid)
{
    for (std::size_t j = 0; j < cs.paths.size(); ++j) {
        if (cs.paths[j].pid == pid) {
            return static_cast<std::int32_t>(j);
        }
    }
    return -1;
}

} // namespace

void simulation::reunion_interval()
{
    const auto& p = _scenario.roce.reunion;
    const auto& topo = *_scenario.topology;
    constexpr std::uint32_t full = std::numeric_limits<std::uint32_t>::max();
    const auto switch_links = [&](const std::vector<port_id>& ports, auto&& fn) {
        for (const auto port : ports) {
            if (!topo.is_host(_ports[port].to)) {
                fn(port);
            }
        }
    };

    // Algorithm 2 at every source switch: the notifications of the interval that ends.
    for (topology::node_id v = 0; v < _reunion.elephants.size(); ++v) {
        auto& mine = _reunion.elephants[v];
        std::erase_if(mine, [&](std::uint32_t fid) { return _flows[fid].complete(); });
        if (mine.empty()) {
            _reunion.avoid[v].clear();
            continue;
        }
        std::unordered_map<port_id, std::uint32_t> links;
        for (const auto fid : mine) {
            const auto& f = _flows[fid];
            switch_links(candidates(f.spec.src, f.spec.dst).paths[_reunion.flows[fid].path].ports,
                         [&](port_id l) { ++links[l]; });
        }
        for (const auto l : _reunion.avoid[v]) {
            links[l] = full;
        }
        _reunion.avoid[v].clear();
        for (const auto fid : mine) {
            auto& rf = _reunion.flows[fid];
            if (!rf.reroute) {
                continue;
            }
            rf.reroute = false;
            const auto& f = _flows[fid];
            const auto& cs = candidates(f.spec.src, f.spec.dst);
            const auto own = [&](std::int32_t delta) {
                switch_links(cs.paths[rf.path].ports, [&](port_id l) {
                    if (links[l] != full) {
                        links[l] = static_cast<std::uint32_t>(static_cast<std::int32_t>(links[l]) + delta);
                    }
                });
            };
            own(-1); // the flow does not collide with itself
            const auto n = static_cast<std::uint32_t>(cs.paths.size());
            const std::uint32_t first = _lb_rng[v].below(n);
            bool moved = false;
            for (std::uint32_t j = 0; j < n && !moved; ++j) {
                const auto candidate = static_cast<std::uint16_t>((first + j) % n);
                if (candidate == rf.path) {
                    continue;
                }
                bool available = true;
                switch_links(cs.paths[candidate].ports, [&](port_id l) {
                    const auto it = links.find(l);
                    available = available && (it == links.end() || it->second < p.tolerance);
                });
                if (available) {
                    rf.path = candidate;
                    moved = true;
                    ++_roce.reunion_reroutes;
                    ++_roce.path_changes;
                }
            }
            own(+1);
        }
    }

    // Algorithm 1 at every destination switch: one notification per bottleneck link.
    for (topology::node_id v = 0; v < _reunion.dest.size(); ++v) {
        auto& table = _reunion.dest[v];
        if (table.bottlenecks.empty()) {
            table.elephants.clear();
            continue;
        }
        std::unordered_map<port_id, std::uint32_t> links;
        for (const auto& [fid, pid] : table.elephants) {
            const auto& f = _flows[fid];
            const auto& cs = candidates(f.spec.src, f.spec.dst);
            if (const auto j = index_of(cs, pid); j >= 0) {
                switch_links(cs.paths[static_cast<std::size_t>(j)].ports, [&](port_id l) { ++links[l]; });
            }
        }
        std::vector<port_id> high;
        for (const auto& [l, count] : links) {
            if (count > p.tolerance) {
                high.push_back(l);
            }
        }
        std::sort(high.begin(), high.end()); // a deterministic order (hash maps have none)
        std::vector<std::pair<port_id, std::uint32_t>> marked(table.bottlenecks.begin(), table.bottlenecks.end());
        std::sort(marked.begin(), marked.end());
        for (const auto& [bottleneck, fid] : marked) {
            std::uint32_t note = 0;
            if (_reunion.free_notes.empty()) {
                note = static_cast<std::uint32_t>(_reunion.notes.size());
                _reunion.notes.emplace_back();
            } else {
                note = _reunion.free_notes.back();
                _reunion.free_notes.pop_back();
            }
            _reunion.notes[note] = reunion_note{fid, bottleneck, high};
            const std::uint32_t i = roce_control(roce_op::reunion_notify, packet_class::plain, true, v,
                                                 _tor[_flows[fid].spec.src], fid);
            packet& c = _packets[i];
            c.psn = note;
            c.hash = mix32(fid ^ 0x27d4eb2du);
            ++_roce.reunion_notifies;
            roce_forward(i, v);
        }
        table.elephants.clear();
        table.bottlenecks.clear();
    }

    for (auto& seen : _reunion_port_flows) {
        seen.clear();
    }
}

void simulation::reunion_on_notify(const packet& k, topology::node_id at)
{
    auto& note = _reunion.notes[k.psn];
    auto& avoid = _reunion.avoid[at];
    avoid.push_back(note.bottleneck);
    avoid.insert(avoid.end(), note.high_utilisation.begin(), note.high_utilisation.end());
    _reunion.flows[note.flow].reroute = true;
    note.high_utilisation.clear();
    _reunion.free_notes.push_back(k.psn);
}

} // namespace laps::fabric
