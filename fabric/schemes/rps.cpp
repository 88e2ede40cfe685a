#include "fabric/schemes/rps.hpp"

#include "fabric/schemes/entropy.hpp"
#include "fabric/schemes/node_random.hpp"

namespace laps::fabric::schemes {

namespace {

class rps final : public scheme {
public:
    explicit rps(simulation& sim) : scheme(sim), _random(sim.seed(), sim.topology().node_count()) {}

    void on_send(const flow& f, roce_qp& q, packet& k) override
    {
        q.entropy = static_cast<std::uint16_t>(_random[f.spec.src].below(0x4000));
        steer(_sim, f, q, k);
    }

private:
    node_random _random;
};

} // namespace

std::unique_ptr<scheme> make_rps(simulation& sim)
{
    return std::make_unique<rps>(sim);
}

} // namespace laps::fabric::schemes
