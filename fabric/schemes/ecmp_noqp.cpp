#include "fabric/schemes/ecmp_noqp.hpp"

#include "fabric/simulation.hpp"

namespace laps::fabric::schemes {

namespace {

class ecmp_noqp final : public scheme {
public:
    explicit ecmp_noqp(simulation& sim) : scheme(sim) {}

    void on_flow_start(const flow& f, roce_qp& q, const candidate_set&) override
    {
        const auto& hosts = _sim.hosts();
        q.sport = hosts::roce_udp_port;
        q.hash = hosts::roce_hash(hosts[f.spec.src], hosts[f.spec.dst], q.sport);
    }
};

} // namespace

std::unique_ptr<scheme> make_ecmp_noqp(simulation& sim)
{
    return std::make_unique<ecmp_noqp>(sim);
}

} // namespace laps::fabric::schemes
