#include "fabric/schemes/reps.hpp"

#include "fabric/frames.hpp"
#include "fabric/schemes/entropy.hpp"
#include "fabric/units.hpp"

#include <algorithm>
#include <optional>
#include <vector>

namespace laps::fabric::schemes {

namespace {

enum counter : std::size_t { recycled, explored, freezes };

class reps final : public scheme {
public:
    explicit reps(simulation& sim)
        : scheme(sim), _config(sim.config().scheme_params.get<reps_params>("reps").config), _flows(sim.flows().size())
    {
        const auto& s = sim.config();
        const std::uint32_t packet_bytes = payload_per_frame(s.fabric.frame_bytes) + hosts::roce_data_overhead;
        const std::uint64_t bdp_packets = s.roce.irn_bdp_bytes / packet_bytes;
        _config.explore_packets = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, bdp_packets));
    }

    void on_flow_start(const flow& f, roce_qp&, const candidate_set&) override { _flows[f.id].emplace(_config); }

    void on_send(const flow& f, roce_qp& q, packet& k) override
    {
        auto& r = *_flows[f.id];
        const std::uint32_t before = r.explored();
        q.entropy = r.on_send(k.roce.psn, _sim.now());
        ++_counts[r.explored() != before ? explored : recycled];
        steer(_sim, f, q, k);
    }

    void on_ack(const packet& k, roce_qp&) override { _flows[k.flow]->on_ack(k.roce.entropy, k.roce.ecn_echo); }

    void on_timeout(std::uint32_t flow, roce_qp&) override
    {
        _flows[flow]->on_timeout(_sim.now()); // a timeout may be a failure: freeze exploration
        ++_counts[freezes];
    }

    std::span<const std::uint64_t> counts() const noexcept override { return _counts; }

private:
    policy::reps_config _config;
    std::vector<std::optional<policy::reps>> _flows;
    std::array<std::uint64_t, reps_counters.size()> _counts{};
};

} // namespace

std::unique_ptr<scheme> make_reps(simulation& sim)
{
    return std::make_unique<reps>(sim);
}

std::any parse_reps_params(const config::reader& r, const YAML::Node& n)
{
    const std::string k = "roce.reps";
    reps_params p;
    r.expect_map(n, k, {"entropies", "cache_size", "freeze_us"});
    r.optional_integer(n, k, "entropies", p.config.entropies, 1, 0x4000);
    r.optional_integer(n, k, "cache_size", p.config.cache_size, 1, policy::reps::max_cache);
    optional_us(r, n, k, "freeze_us", p.config.freeze_ns, false);
    return p;
}

} // namespace laps::fabric::schemes
