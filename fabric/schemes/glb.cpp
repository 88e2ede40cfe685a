#include "fabric/schemes/glb.hpp"

#include "fabric/schemes/link_quality.hpp"
#include "fabric/simulation.hpp"

namespace laps::fabric::schemes {

namespace {

class glb final : public quality_scheme {
public:
    explicit glb(simulation& sim) : quality_scheme(sim, _advertised), _advertised(sim.ports().size(), 0)
    {
        sim.schedule().push(_params.heartbeat_ns, event_kind::scheme_timer, 0, 0);
    }

    // The heartbeat: every switch advertises the quality of each of its links to its neighbours.
    void on_timer(std::uint32_t, std::uint32_t) override
    {
        for (port_id p = 0; p < _advertised.size(); ++p) {
            _advertised[p] = quality(p);
        }
        ++_heartbeats;
        _sim.schedule().push(_sim.now() + _params.heartbeat_ns, event_kind::scheme_timer, 0, 0);
    }

    std::span<const std::uint64_t> counts() const noexcept override
    {
        _counts = {_flowlets.count(), _heartbeats};
        return _counts;
    }

private:
    std::vector<std::uint8_t> _advertised; // per port: the quality its switch last advertised
    std::uint64_t _heartbeats = 0;
    mutable std::array<std::uint64_t, glb_counters.size()> _counts{};
};

} // namespace

std::unique_ptr<scheme> make_glb(simulation& sim)
{
    return std::make_unique<glb>(sim);
}

} // namespace laps::fabric::schemes
