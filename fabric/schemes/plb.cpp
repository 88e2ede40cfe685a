#include "fabric/schemes/plb.hpp"

#include "fabric/schemes/node_random.hpp"
#include "fabric/simulation.hpp"

#include <vector>

namespace laps::fabric::schemes {

namespace {

enum counter : std::size_t { repaths, rounds, congested };

class plb final : public scheme {
public:
    explicit plb(simulation& sim)
        : scheme(sim), _params(sim.config().scheme_params.get<plb_params>("plb")), _flows(sim.flows().size()),
          _random(sim.seed(), sim.topology().node_count())
    {
    }

    void on_flow_start(const flow& f, roce_qp& q, const candidate_set& cs) override
    {
        if (!cs.paths.empty()) {
            const std::uint32_t salt = _sim.nodes()[_sim.tor_of(f.spec.src)].ecmp_salt;
            _flows[f.id].path = static_cast<std::uint16_t>(mix32(q.hash ^ salt) % cs.paths.size());
        }
    }

    // The host's choice travels in the packet to its source ToR.
    void on_send(const flow& f, roce_qp&, packet& k) override { k.roce.pid = _flows[f.id].path; }

    std::uint16_t choose_path(packet& k, topology::node_id, const candidate_set& cs) override
    {
        return k.roce.pid < cs.paths.size() ? k.roce.pid : 0;
    }

    void on_round(std::uint32_t flow, roce_qp& q, double marked) override
    {
        auto& s = _flows[flow];
        const bool hot = marked >= _params.congested_fraction;
        s.congested_rounds = hot ? s.congested_rounds + 1 : 0;
        ++_counts[rounds];
        _counts[congested] += hot ? 1 : 0;
        const bool idle = s.congested_rounds >= _params.idle_rounds && q.snd_nxt == q.snd_una;
        const bool forced = s.congested_rounds >= _params.forced_rounds;
        const auto& f = _sim.flows()[flow];
        const auto& cs = _sim.candidates().of(f.spec.src, f.spec.dst);
        if (!s.paused && (idle || forced) && cs.paths.size() > 1) {
            const auto n = static_cast<std::uint32_t>(cs.paths.size());
            s.path = static_cast<std::uint16_t>((s.path + 1 + _random[f.spec.src].below(n - 1)) % n);
            s.congested_rounds = 0;
            ++_counts[repaths];
            ++_path_changes;
        }
    }

    void on_timeout(std::uint32_t flow, roce_qp&) override
    {
        _flows[flow].paused = true;
        _flows[flow].congested_rounds = 0;
    }

    std::span<const std::uint64_t> counts() const noexcept override { return _counts; }

private:
    struct flow_state {
        std::uint16_t path = hosts::no_pid; // index into the candidates
        std::uint32_t congested_rounds = 0;
        bool paused = false; // after a timeout
    };

    plb_params _params;
    std::vector<flow_state> _flows;
    node_random _random;
    std::array<std::uint64_t, plb_counters.size()> _counts{};
};

} // namespace

std::unique_ptr<scheme> make_plb(simulation& sim)
{
    return std::make_unique<plb>(sim);
}

std::any parse_plb_params(const config::reader& r, const YAML::Node& n)
{
    const std::string k = "roce.plb";
    plb_params p;
    r.expect_map(n, k, {"forced_rounds", "idle_rounds", "congested_fraction"});
    r.optional_integer(n, k, "forced_rounds", p.forced_rounds, 1, 1 << 20);
    r.optional_integer(n, k, "idle_rounds", p.idle_rounds, 1, 1 << 20);
    r.optional_number(n, k, "congested_fraction", p.congested_fraction, 0.0, 1.0, true);
    return p;
}

} // namespace laps::fabric::schemes
