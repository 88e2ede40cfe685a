#include "fabric/schemes/flowbender.hpp"

#include "config/laps_config.hpp"
#include "fabric/schemes/entropy.hpp"
#include "fabric/schemes/node_random.hpp"
#include "policy/flowbender.hpp"

#include <optional>
#include <vector>

namespace laps::fabric::schemes {

namespace {

class flowbender final : public scheme {
public:
    explicit flowbender(simulation& sim)
        : scheme(sim), _config(sim.config().scheme_params.get<policy::flowbender_config>("flowbender")),
          _flows(sim.flows().size()), _random(sim.seed(), sim.topology().node_count())
    {
    }

    void on_flow_start(const flow& f, roce_qp& q, const candidate_set&) override
    {
        auto& b = _flows[f.id].emplace(_config, static_cast<std::uint16_t>(q.entropy % _config.entropies));
        q.entropy = b.current();
    }

    void on_send(const flow& f, roce_qp& q, packet& k) override { steer(_sim, f, q, k); }

    void on_ack(const packet& k, roce_qp& q) override
    {
        const time_ns now = _sim.now();
        auto& b = *_flows[k.flow];
        if (b.on_ack(k.roce.ecn_echo, now - k.roce.sent_ns, now, _random[_sim.flows()[k.flow].spec.src])) {
            moved(q, b);
        }
    }

    void on_timeout(std::uint32_t flow, roce_qp& q) override
    {
        auto& b = *_flows[flow];
        if (b.on_timeout(_random[_sim.flows()[flow].spec.src])) {
            moved(q, b);
        }
    }

    std::span<const std::uint64_t> counts() const noexcept override { return _reroutes; }

private:
    void moved(roce_qp& q, const policy::flowbender& b)
    {
        q.entropy = b.current();
        ++_reroutes[0];
        ++_path_changes;
    }

    policy::flowbender_config _config;
    std::vector<std::optional<policy::flowbender>> _flows;
    node_random _random;
    std::array<std::uint64_t, flowbender_counters.size()> _reroutes{};
};

} // namespace

std::unique_ptr<scheme> make_flowbender(simulation& sim)
{
    return std::make_unique<flowbender>(sim);
}

std::any parse_flowbender_params(const config::reader& r, const YAML::Node& n)
{
    policy::flowbender_config c;
    config::parse_flowbender_section(r, n, "roce.flowbender", c, true);
    return c;
}

} // namespace laps::fabric::schemes
