// Faults of a scenario, applied at their (scaled) time: links going down and
// up, blackholes, random loss and corruption (docs/testbed.md, Faults).
#include "fabric/simulation.hpp"

#include <rte_mbuf.h>

namespace laps::fabric {

void simulation::set_link_down(port_id p)
{
    auto& pt = _ports[p];
    if (!pt.up) {
        return;
    }
    pt.up = false;
    ++pt.epoch; // packets on the wire are lost when they "arrive"
    pt.account(_now);
    pt.queue.flush(_packets, [&](std::uint32_t i) {
        leave_node(i, p);
        drop(i, drop_reason::link_down, p);
    });
    // The packet being serialised is dropped at its tx_done.
}

void simulation::apply_fault(std::uint32_t index)
{
    const auto& f = _faults.planned[index];
    _faults.applied.emplace_back(_now, f.label);
    std::vector<port_id> targets;
    if (f.all_links) {
        for (port_id p = 0; p < _ports.size(); ++p) {
            targets.push_back(p);
        }
    } else {
        if (f.forward) {
            targets.push_back(port_of(f.link, false));
        }
        if (f.reverse) {
            targets.push_back(port_of(f.link, true));
        }
    }
    for (const port_id p : targets) {
        auto& pt = _ports[p];
        switch (f.action) {
        case fault_action::down:
            set_link_down(p);
            break;
        case fault_action::up:
            pt.up = true;
            start_next(p);
            break;
        case fault_action::blackhole:
            pt.blackhole = true;
            break;
        case fault_action::restore:
            pt.blackhole = false;
            pt.loss = 0;
            pt.corruption = 0;
            break;
        case fault_action::loss:
            pt.loss = f.probability;
            break;
        case fault_action::corruption:
            pt.corruption = f.probability;
            break;
        }
    }
}

} // namespace laps::fabric
