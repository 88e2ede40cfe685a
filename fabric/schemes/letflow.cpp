#include "fabric/schemes/letflow.hpp"

#include "fabric/schemes/flowlets.hpp"
#include "fabric/schemes/node_random.hpp"
#include "fabric/simulation.hpp"

namespace laps::fabric::schemes {

namespace {

class letflow final : public scheme {
public:
    explicit letflow(simulation& sim)
        : scheme(sim), _flowlets(sim.flows().size(), sim.config().roce.flowlet_timeout_ns),
          _random(sim.seed(), sim.topology().node_count())
    {
    }

    std::uint16_t choose_path(packet& k, topology::node_id at, const candidate_set& cs) override
    {
        const auto n = static_cast<std::uint32_t>(cs.paths.size());
        return _flowlets.path(k.flow, _sim.now(), _path_changes,
                              [&] { return static_cast<std::uint16_t>(_random[at].below(n)); });
    }

    std::span<const std::uint64_t> counts() const noexcept override { return {&_flowlets.count(), 1}; }

private:
    flowlet_table _flowlets;
    node_random _random;
};

} // namespace

std::unique_ptr<scheme> make_letflow(simulation& sim)
{
    return std::make_unique<letflow>(sim);
}

} // namespace laps::fabric::schemes
