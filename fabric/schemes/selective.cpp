#include "fabric/schemes/selective.hpp"

#include "common/names.hpp"
#include "fabric/schemes/entropy.hpp"
#include "fabric/schemes/node_random.hpp"

#include <algorithm>

namespace laps::fabric::schemes {

namespace {

inline constexpr std::array elephant_rule_names{
    common::named<policy::elephant_rule>{"posted", policy::elephant_rule::posted},
    common::named<policy::elephant_rule>{"sent", policy::elephant_rule::sent},
};

class selective final : public scheme {
public:
    explicit selective(simulation& sim)
        : scheme(sim), _params(sim.config().scheme_params.get<selective_params>("selective")),
          _sprays(sim.flows().size(), 0), _random(sim.seed(), sim.topology().node_count())
    {
    }

    void on_flow_start(const flow& f, roce_qp&, const candidate_set&) override
    {
        const bool marked = std::find(_params.items.begin(), _params.items.end(), f.spec.tag) != _params.items.end();
        if (marked || policy::sprays(_params.rule, f.spec.bytes, 0)) {
            spray(f.id);
        }
    }

    void on_send(const flow& f, roce_qp& q, packet& k) override
    {
        if (_sprays[f.id] == 0 && _params.rule.rule == policy::elephant_rule::sent &&
            policy::sprays(_params.rule, f.spec.bytes, q.sent_bytes)) {
            spray(f.id); // it became an elephant
        }
        if (_sprays[f.id] != 0) {
            q.entropy = static_cast<std::uint16_t>(_random[f.spec.src].below(0x4000));
        }
        steer(_sim, f, q, k);
    }

    std::span<const std::uint64_t> counts() const noexcept override { return _sprayed; }

private:
    void spray(std::uint32_t flow)
    {
        _sprays[flow] = 1;
        ++_sprayed[0];
    }

    selective_params _params;
    std::vector<std::uint8_t> _sprays; // per flow: sprays (an elephant, or marked)
    node_random _random;
    std::array<std::uint64_t, selective_counters.size()> _sprayed{};
};

} // namespace

std::unique_ptr<scheme> make_selective(simulation& sim)
{
    return std::make_unique<selective>(sim);
}

std::any parse_selective_params(const config::reader& r, const YAML::Node& n)
{
    const std::string k = "roce.selective";
    selective_params p;
    r.expect_map(n, k, {"elephant_bytes", "classify", "items"});
    if (const auto v = n["items"]) {
        r.expect_list(v, k + ".items");
        for (std::size_t i = 0; i < v.size(); ++i) {
            p.items.push_back(
                static_cast<std::uint32_t>(r.integer(v[i], k + ".items[" + std::to_string(i) + "]", 0, 1 << 20)));
        }
    }
    r.optional_integer(n, k, "elephant_bytes", p.rule.elephant_bytes, 0, std::int64_t{1} << 50);
    if (const auto v = n["classify"]) {
        p.rule.rule = r.choice_of(v, k + ".classify", elephant_rule_names);
    }
    return p;
}

} // namespace laps::fabric::schemes
