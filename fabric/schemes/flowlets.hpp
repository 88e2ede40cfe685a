#pragma once
// Flowlet switching at the source ToR (LetFlow, CONGA, DLB, GLB): a flow
// idle longer than the flowlet timeout (roce.flowlet_timeout_us) starts a
// new flowlet, whose path the scheme picks; packets of a flowlet follow it.

#include "common/time.hpp"

#include <cstdint>
#include <vector>

namespace laps::fabric::schemes {

class flowlet_table {
public:
    flowlet_table(std::size_t flows, common::time_ns timeout) : _flows(flows), _timeout(timeout) {}

    // The candidate of flow `flow`'s packet at `now`: its flowlet's, or for a
    // new flowlet `pick()`'s (a move to another path counts in `changes`).
    template <typename Pick>
    std::uint16_t path(std::uint32_t flow, common::time_ns now, std::uint64_t& changes, Pick&& pick)
    {
        auto& fl = _flows[flow];
        if (!fl.seen || now - fl.last > _timeout) {
            ++_count;
            const std::uint16_t next = pick();
            if (fl.seen && next != fl.path) {
                ++changes;
            }
            fl.path = next;
            fl.seen = true;
        }
        fl.last = now;
        return fl.path;
    }

    // New flowlets so far.
    const std::uint64_t& count() const noexcept { return _count; }

private:
    struct flowlet {
        bool seen = false;
        std::uint16_t path = 0;   // index into the candidate set
        common::time_ns last = 0; // last packet of the flow through the ToR
    };

    std::vector<flowlet> _flows;
    common::time_ns _timeout;
    std::uint64_t _count = 0;
};

} // namespace laps::fabric::schemes
