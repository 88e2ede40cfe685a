#include "fabric/schemes/link_quality.hpp"

#include "fabric/schemes/conga.hpp"
#include "fabric/simulation.hpp"
#include "fabric/units.hpp"

#include <algorithm>
#include <cmath>

namespace laps::fabric::schemes {

namespace {

// The load estimators are CONGA's (roce.conga).
const dre_params& _dre_params(const simulation& sim)
{
    return sim.config().scheme_params.get<conga_params>("conga").dre;
}

} // namespace

quality_scheme::quality_scheme(simulation& sim, const std::vector<std::uint8_t>& advertised)
    : scheme(sim), _params(sim.config().scheme_params.get<dlb_params>("dlb")),
      _flowlets(sim.flows().size(), sim.config().roce.flowlet_timeout_ns),
      _dre(_dre_params(sim), sim.ports()),
      _random(sim.seed(), sim.topology().node_count()), _advertised(advertised),
      _levels(std::ldexp(1.0, static_cast<int>(_dre_params(sim).quantize_bits)))
{
}

std::uint8_t quality_scheme::quality(port_id p)
{
    const double levels = _levels;
    const double queue = static_cast<double>(_sim.ports()[p].queue.bytes()) /
                         static_cast<double>(std::max<std::uint64_t>(1, _params.queue_full_bytes));
    const auto queue_level = static_cast<std::uint8_t>(std::min(levels - 1, std::floor(queue * levels)));
    return std::max(_dre.level(p, _sim.now()), queue_level);
}

std::uint16_t quality_scheme::choose_path(packet& k, topology::node_id at, const candidate_set& cs)
{
    return _flowlets.path(k.flow, _sim.now(), _path_changes, [&] { return pick(at, cs); });
}

std::uint16_t quality_scheme::pick(topology::node_id at, const candidate_set& cs)
{
    // The lowest level wins (0: idle); ties at random.
    std::uint32_t best = 0x100;
    std::uint32_t ties = 0;
    std::uint16_t choice = 0;
    for (std::size_t j = 0; j < cs.paths.size(); ++j) {
        const auto& ports = cs.paths[j].ports;
        std::uint32_t m = ports.empty() ? 0 : quality(ports.front());
        if (!_advertised.empty()) {
            for (std::size_t h = 1; h < ports.size(); ++h) {
                m = std::max<std::uint32_t>(m, _advertised[ports[h]]);
            }
        }
        if (m < best) {
            best = m;
            ties = 1;
            choice = static_cast<std::uint16_t>(j);
        } else if (m == best && _random[at].below(++ties) == 0) {
            choice = static_cast<std::uint16_t>(j);
        }
    }
    return choice;
}

void quality_scheme::on_hop(packet&, port_id out)
{
    _dre.level(out, _sim.now());
}

void quality_scheme::on_dequeue(port_id p, std::uint32_t bytes)
{
    _dre.add(p, bytes, _sim.now());
}

std::any parse_dlb_params(const config::reader& r, const YAML::Node& n)
{
    const std::string k = "roce.dlb";
    dlb_params p;
    r.expect_map(n, k, {"queue_full_bytes", "heartbeat_us"});
    r.optional_integer(n, k, "queue_full_bytes", p.queue_full_bytes, 1, std::int64_t{1} << 40);
    optional_us(r, n, k, "heartbeat_us", p.heartbeat_ns);
    return p;
}

} // namespace laps::fabric::schemes
