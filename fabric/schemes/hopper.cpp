#include "fabric/schemes/hopper.hpp"

#include "config/laps_config.hpp"
#include "fabric/schemes/entropy.hpp"
#include "fabric/schemes/node_random.hpp"

#include <algorithm>
#include <optional>
#include <vector>

namespace laps::fabric::schemes {

namespace {

enum counter : std::size_t { probes, switches };

class hopper final : public scheme {
public:
    explicit hopper(simulation& sim)
        : scheme(sim), _config(sim.config().scheme_params.get<policy::hopper_config>("hopper")),
          _flows(sim.flows().size()), _random(sim.seed(), sim.topology().node_count())
    {
    }

    void on_flow_start(const flow& f, roce_qp& q, const candidate_set& cs) override
    {
        auto c = _config;
        // Base RTT: the fastest candidate there and an ACK's way back.
        c.base_ns = policy::hopper_base_ns(cs.paths, [](const candidate& path) { return path.uncongested_ns; }, 2);
        auto& h = _flows[f.id].emplace(c, static_cast<std::uint16_t>(q.entropy % c.entropies)); // a random first path
        q.entropy = h.current();
    }

    void on_send(const flow& f, roce_qp& q, packet& k) override { steer(_sim, f, q, k); }

    void on_ack(const packet& k, roce_qp& q) override
    {
        const time_ns now = _sim.now();
        const topology::node_id src = _sim.flows()[k.flow].spec.src;
        const auto d = _flows[k.flow]->on_rtt(k.roce.entropy, now - k.roce.sent_ns, now, _random[src]);
        for (std::uint8_t i = 0; i < d.probes; ++i) {
            send_probe(k.flow, d.probe[i]);
        }
        if (d.switched) {
            q.entropy = d.entropy;
            // The new path's first packet waits the RTT difference (fewer out-of-order arrivals).
            q.next_avail = std::max(q.next_avail, now + d.delay_ns);
            ++_counts[switches];
            ++_path_changes;
        }
    }

    void on_timeout(std::uint32_t flow, roce_qp& q) override
    {
        auto& h = *_flows[flow];
        if (h.on_timeout(_sim.now(), _random[_sim.flows()[flow].spec.src]).switched) {
            q.entropy = h.current();
            ++_counts[switches];
            ++_path_changes;
        }
    }

    void on_probe_reply(const packet& reply, roce_qp& q) override
    {
        if (q.active && _flows[reply.flow]) {
            _flows[reply.flow]->on_probe(reply.roce.entropy, _sim.now() - reply.roce.sent_ns, _sim.now());
        }
    }

    std::span<const std::uint64_t> counts() const noexcept override { return _counts; }

private:
    // A probe on `entropy`: a small DATA-class packet its receiver answers.
    void send_probe(std::uint32_t fid, std::uint16_t entropy)
    {
        const auto& f = _sim.flows()[fid];
        const auto& hosts = _sim.hosts();
        auto& packets = _sim.packets();
        const std::uint32_t i =
            hosts::new_control(packets, roce_op::probe, packet_class::probe, false, f.spec.src, f.spec.dst, fid);
        packet& k = packets[i];
        k.ect = true;
        k.roce.entropy = entropy;
        k.roce.sent_ns = _sim.now();
        k.hash = hosts::roce_hash(hosts[f.spec.src], hosts[f.spec.dst], hosts::entropy_port(entropy));
        ++_counts[probes];
        _sim.forward(i, f.spec.src);
    }

    policy::hopper_config _config;
    std::vector<std::optional<policy::hopper>> _flows;
    node_random _random;
    std::array<std::uint64_t, hopper_counters.size()> _counts{};
};

} // namespace

std::unique_ptr<scheme> make_hopper(simulation& sim)
{
    return std::make_unique<hopper>(sim);
}

std::any parse_hopper_params(const config::reader& r, const YAML::Node& n)
{
    policy::hopper_config c;
    config::parse_hopper_section(r, n, "roce.hopper", c, true);
    return c;
}

} // namespace laps::fabric::schemes
