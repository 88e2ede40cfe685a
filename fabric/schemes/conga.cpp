#include "fabric/schemes/conga.hpp"

#include "fabric/schemes/flowlets.hpp"
#include "fabric/schemes/node_random.hpp"
#include "fabric/simulation.hpp"
#include "fabric/units.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace laps::fabric::schemes {

namespace {

// CONGA's fields on a packet: DATA's path congestion so far; on an ACK, one
// feedback entry (a path and its congestion) for the data's source leaf.
struct conga_header {
    std::uint8_t ce = 0;
    std::uint8_t fb_metric = 0;
    bool fb = false;
    std::uint64_t fb_route = 0;
};

struct metric {
    std::uint8_t value = 0;
    time_ns at = 0;
};

// What a destination leaf feeds back to one source leaf.
struct feedback {
    std::vector<std::uint64_t> routes;                     // in first-seen order (round robin)
    std::unordered_map<std::uint64_t, std::uint32_t> slot; // route -> index in routes
    std::vector<std::uint8_t> metric;
    std::vector<bool> changed;
    std::size_t rr = 0;
};

struct leaf {
    std::unordered_map<std::uint64_t, metric> to_leaf;          // route -> congestion, fed back from the far leaf
    std::unordered_map<topology::node_id, feedback> from_leaf; // source leaf -> what to feed back
};

class conga final : public scheme {
public:
    explicit conga(simulation& sim)
        : scheme(sim), _params(sim.config().scheme_params.get<conga_params>("conga")),
          _flowlets(sim.flows().size(), sim.config().roce.flowlet_timeout_ns), _dre(_params.dre, sim.ports()),
          _random(sim.seed(), sim.topology().node_count()), _leaves(sim.topology().node_count())
    {
    }

    std::uint16_t choose_path(packet& k, topology::node_id at, const candidate_set& cs) override
    {
        const auto path = _flowlets.path(k.flow, _sim.now(), _path_changes, [&] { return pick(at, cs, k.dst); });
        auto h = header_of<conga_header>(k);
        h.ce = 0; // measured from here on
        set_header(k, h);
        return path;
    }

    bool at_destination_tor(std::uint32_t i, topology::node_id at) override
    {
        // Remember the path's congestion, to be fed back to the source leaf.
        const packet& k = _sim.packets()[i];
        auto& fb = _leaves[at].from_leaf[_sim.tor_of(k.roce.src)];
        auto [it, fresh] = fb.slot.try_emplace(k.roce.route, static_cast<std::uint32_t>(fb.routes.size()));
        if (fresh) {
            fb.routes.push_back(k.roce.route);
            fb.metric.push_back(0);
            fb.changed.push_back(false);
        }
        fb.metric[it->second] = header_of<conga_header>(k).ce;
        fb.changed[it->second] = true;
        return false;
    }

    void on_hop(packet& k, port_id out) override
    {
        auto h = header_of<conga_header>(k);
        h.ce = std::max(h.ce, _dre.level(out, _sim.now()));
        set_header(k, h);
    }

    void on_reverse(packet& k, topology::node_id at) override
    {
        // An ACK travels from the data's destination leaf to its source leaf:
        // the first piggybacks one congestion-from-leaf entry on it, the
        // second stores it (congestion-to-leaf).
        const topology::node_id data_dst_leaf = _sim.tor_of(k.roce.src);
        const topology::node_id data_src_leaf = _sim.tor_of(k.dst);
        if (data_dst_leaf == data_src_leaf) {
            return;
        }
        auto h = header_of<conga_header>(k);
        if (at == data_dst_leaf && !h.fb) {
            auto found = _leaves[at].from_leaf.find(data_src_leaf);
            if (found != _leaves[at].from_leaf.end() && !found->second.routes.empty()) {
                auto& fb = found->second;
                const std::size_t n = fb.routes.size();
                std::size_t pick = fb.rr % n;
                for (std::size_t j = 0; j < n; ++j) {
                    const std::size_t c = (fb.rr + j) % n;
                    if (fb.changed[c]) {
                        pick = c;
                        break;
                    }
                }
                h.fb = true;
                h.fb_route = fb.routes[pick];
                h.fb_metric = fb.metric[pick];
                fb.changed[pick] = false;
                fb.rr = pick + 1;
            }
        }
        if (at == data_src_leaf && h.fb) {
            _leaves[at].to_leaf[h.fb_route] = metric{h.fb_metric, _sim.now()};
            h.fb = false;
            ++_feedback;
        }
        set_header(k, h);
    }

    void on_dequeue(port_id p, std::uint32_t bytes) override { _dre.add(p, bytes, _sim.now()); }

    std::span<const std::uint64_t> counts() const noexcept override
    {
        _counts = {_flowlets.count(), _feedback};
        return _counts;
    }

private:
    // The path minimising max(local uplink DRE, congestion-to-leaf); ties at random.
    std::uint16_t pick(topology::node_id at, const candidate_set& cs, topology::node_id dst)
    {
        const time_ns now = _sim.now();
        std::uint32_t best = 0x100;
        std::uint32_t ties = 0;
        std::uint16_t choice = 0;
        const auto& to_leaf = _leaves[at].to_leaf;
        for (std::size_t j = 0; j < cs.paths.size(); ++j) {
            const auto& c = cs.paths[j];
            std::size_t a = 0;
            while (a < c.anchor_count && c.anchors[a] == at) {
                ++a;
            }
            // The ToR's uplink toward this path (its first hop from here).
            const topology::node_id target = a < c.anchor_count ? c.anchors[a] : dst;
            const port_id p = _sim.next_hops().toward(at, target);
            const std::uint32_t local = p == no_port ? 0 : _dre.level(p, now);
            std::uint32_t remote = 0;
            if (const auto it = to_leaf.find(c.route); it != to_leaf.end() && now - it->second.at <= _params.aging_ns) {
                remote = it->second.value;
            }
            const std::uint32_t m = std::max(local, remote);
            if (m < best) {
                best = m;
                ties = 1;
                choice = static_cast<std::uint16_t>(j);
            } else if (m == best) {
                ++ties;
                if (_random[at].below(ties) == 0) {
                    choice = static_cast<std::uint16_t>(j);
                }
            }
        }
        return choice;
    }

    conga_params _params;
    flowlet_table _flowlets;
    dre_table _dre;
    node_random _random;
    std::vector<leaf> _leaves; // per node
    std::uint64_t _feedback = 0;
    mutable std::array<std::uint64_t, conga_counters.size()> _counts{};
};

} // namespace

std::unique_ptr<scheme> make_conga(simulation& sim)
{
    return std::make_unique<conga>(sim);
}

std::any parse_conga_params(const config::reader& r, const YAML::Node& n)
{
    const std::string k = "roce.conga";
    conga_params p;
    r.expect_map(n, k, {"dre_period_us", "dre_alpha", "quantize_bits", "aging_us"});
    optional_us(r, n, k, "dre_period_us", p.dre.period_ns);
    r.optional_number(n, k, "dre_alpha", p.dre.alpha, 0.0, 1.0, true);
    r.optional_integer(n, k, "quantize_bits", p.dre.quantize_bits, 1, 8);
    optional_us(r, n, k, "aging_us", p.aging_ns);
    return p;
}

} // namespace laps::fabric::schemes
