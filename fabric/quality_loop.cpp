// The AI-fabric chapter's switch-side modes (seed 004) at the source ToR:
//   dlb   a new flowlet takes the candidate whose local uplink has the best
//         quality: a 3-bit level of the larger of its load (CONGA's DRE) and
//         its queue depth ("DLB considers link utilization, queue depth");
//   glb   the same, with the quality of the path's remote links as their
//         switches last advertised it in a heartbeat ("GLB heartbeats");
//   telb  a policy table pins each traffic item (tenant, job) to one path.
#include "fabric/simulation.hpp"

#include <algorithm>
#include <cmath>

namespace laps::fabric {

std::uint8_t simulation::link_quality(port_id p)
{
    const auto& cp = _scenario.roce.conga;
    const double levels = std::ldexp(1.0, static_cast<int>(cp.quantize_bits));
    const double queue = static_cast<double>(_ports[p].queue.bytes()) /
                         static_cast<double>(std::max<std::uint64_t>(1, _scenario.roce.dlb.queue_full_bytes));
    const auto queue_level = static_cast<std::uint8_t>(std::min(levels - 1, std::floor(queue * levels)));
    return std::max(dre_level(p), queue_level);
}

std::uint16_t simulation::quality_pick(topology::node_id at, const candidate_set& cs, bool remote)
{
    // The lowest level wins (0: idle); ties at random.
    std::uint32_t best = 0x100;
    std::uint32_t ties = 0;
    std::uint16_t pick = 0;
    for (std::size_t j = 0; j < cs.paths.size(); ++j) {
        const auto& ports = cs.paths[j].ports;
        std::uint32_t m = ports.empty() ? 0 : link_quality(ports.front());
        if (remote) {
            for (std::size_t h = 1; h < ports.size(); ++h) {
                m = std::max<std::uint32_t>(m, _glb_quality[ports[h]]);
            }
        }
        if (m < best) {
            best = m;
            ties = 1;
            pick = static_cast<std::uint16_t>(j);
        } else if (m == best && _lb_rng[at].below(++ties) == 0) {
            pick = static_cast<std::uint16_t>(j);
        }
    }
    return pick;
}

std::uint16_t simulation::telb_pick(const packet& k, std::uint32_t paths)
{
    const std::uint32_t item = _flows[k.flow].spec.tag;
    for (const auto& rule : _scenario.roce.telb) {
        if (rule.item == item) {
            return static_cast<std::uint16_t>(rule.path % paths);
        }
    }
    return static_cast<std::uint16_t>(mix32(k.hash ^ _nodes[_tor[k.src]].ecmp_salt) % paths); // no rule: SLB
}

void simulation::glb_heartbeat()
{
    // Every switch advertises the quality of each of its links to its neighbours.
    for (port_id p = 0; p < _ports.size(); ++p) {
        _glb_quality[p] = link_quality(p);
    }
    ++_roce.glb_heartbeats;
}

void simulation::on_lb_tick(std::uint32_t which)
{
    if (which == lb_tick_glb) {
        glb_heartbeat();
        _events.push(_now + _scenario.roce.dlb.heartbeat_ns, event_kind::lb_tick, 0, lb_tick_glb);
    } else {
        reunion_interval();
        _events.push(_now + _scenario.roce.reunion.interval_ns, event_kind::lb_tick, 0, lb_tick_reunion);
    }
}

} // namespace laps::fabric
