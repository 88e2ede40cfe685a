#include "fabric/schemes/telb.hpp"

#include "fabric/simulation.hpp"

namespace laps::fabric::schemes {

namespace {

class telb final : public scheme {
public:
    explicit telb(simulation& sim) : scheme(sim), _rules(sim.config().scheme_params.get<telb_rules>("telb")) {}

    void on_flow_start(const flow& f, roce_qp&, const candidate_set&) override
    {
        if (rule_of(f.spec.tag) != nullptr) {
            ++_pinned[0];
        }
    }

    std::uint16_t choose_path(packet& k, topology::node_id at, const candidate_set& cs) override
    {
        const auto paths = static_cast<std::uint32_t>(cs.paths.size());
        if (const auto* rule = rule_of(_sim.flows()[k.flow].spec.tag)) {
            return static_cast<std::uint16_t>(rule->path % paths);
        }
        return ecmp_choice(_sim, k, at, paths); // no rule: SLB
    }

    std::span<const std::uint64_t> counts() const noexcept override { return _pinned; }

private:
    const telb_rule* rule_of(std::uint32_t item) const noexcept
    {
        for (const auto& rule : _rules) {
            if (rule.item == item) {
                return &rule;
            }
        }
        return nullptr;
    }

    telb_rules _rules;
    std::array<std::uint64_t, telb_counters.size()> _pinned{};
};

} // namespace

std::unique_ptr<scheme> make_telb(simulation& sim)
{
    return std::make_unique<telb>(sim);
}

std::any parse_telb_params(const config::reader& r, const YAML::Node& n)
{
    const std::string k = "roce.telb";
    r.expect_list(n, k);
    telb_rules out;
    for (std::size_t i = 0; i < n.size(); ++i) {
        const auto item = n[i];
        const std::string key = k + "[" + std::to_string(i) + "]";
        r.expect_map(item, key, {"item", "path"});
        telb_rule rule;
        rule.item = static_cast<std::uint32_t>(r.integer(r.require(item, key, "item"), key + ".item", 0, 1 << 20));
        rule.path = static_cast<std::uint16_t>(r.integer(r.require(item, key, "path"), key + ".path", 0, 0xfffe));
        out.push_back(rule);
    }
    return out;
}

} // namespace laps::fabric::schemes
