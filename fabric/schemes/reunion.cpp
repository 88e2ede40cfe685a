#include "fabric/schemes/reunion.hpp"

#include "fabric/flow_generator.hpp"
#include "fabric/schemes/node_random.hpp"
#include "fabric/simulation.hpp"
#include "fabric/units.hpp"
#include "policy/count_min.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

namespace laps::fabric::schemes {

namespace {

// Reunion's header (seed 000, Fig. 7): the elephant bit and the first
// bottleneck link on the way (a port), when one was marked.
struct reunion_header {
    bool elephant = false;
    bool marked = false;
    port_id bottleneck = 0;
};

// The source switch's Flowlet Table entry of a flow.
struct flow_entry {
    bool seen = false;
    bool elephant = false;
    bool reroute = false;   // a notification asked to move it at the interval's end
    std::uint16_t path = 0; // index into the candidate set
};

// What a destination switch learnt in the current interval.
struct dest_table {
    std::unordered_map<std::uint32_t, std::uint16_t> elephants; // flow -> path (its Link Table, by Path ID)
    std::unordered_map<port_id, std::uint32_t> bottlenecks;     // bottleneck link -> the last flow marked on it
};

// A notification in flight (its packet carries the index in `psn`).
struct notice {
    std::uint32_t flow = 0;
    port_id bottleneck = no_port;
    std::vector<port_id> high_utilisation; // links at or above t elephants
};

enum counter : std::size_t { elephants_found, marks, notifies, reroutes };

// The candidate index of PIT path `pid` in a candidate set.
std::int32_t index_of(const candidate_set& cs, std::uint16_t pid)
{
    for (std::size_t j = 0; j < cs.paths.size(); ++j) {
        if (cs.paths[j].pid == pid) {
            return static_cast<std::int32_t>(j);
        }
    }
    return -1;
}

class reunion final : public scheme {
public:
    explicit reunion(simulation& sim)
        : scheme(sim), _params(sim.config().scheme_params.get<reunion_params>("reunion")), _flows(sim.flows().size()),
          _random(sim.seed(), sim.topology().node_count())
    {
        const auto nodes = sim.topology().node_count();
        _sketch.resize(nodes);
        _elephants.resize(nodes);
        _avoid.resize(nodes);
        _dest.resize(nodes);
        _port_flows.resize(sim.ports().size());
        sim.schedule().push(_params.interval_ns, event_kind::scheme_timer, 0, 0);
    }

    std::uint16_t choose_path(packet& k, topology::node_id at, const candidate_set& cs) override;

    void on_hop(packet& k, port_id out) override
    {
        auto h = header_of<reunion_header>(k);
        if (h.elephant) {
            hop(k, h, out);
        }
    }

    bool at_destination_tor(std::uint32_t i, topology::node_id at) override
    {
        const packet& k = _sim.packets()[i];
        const auto h = header_of<reunion_header>(k);
        if (h.elephant) {
            auto& table = _dest[at];
            table.elephants[k.flow] = k.roce.pid;
            if (h.marked) {
                table.bottlenecks[h.bottleneck] = k.flow;
            }
        }
        return false;
    }

    // A notification reached the flow's source switch `at`.
    void on_control(const packet& k, topology::node_id at) override
    {
        auto& n = _notes[k.roce.psn];
        auto& avoid = _avoid[at];
        avoid.push_back(n.bottleneck);
        avoid.insert(avoid.end(), n.high_utilisation.begin(), n.high_utilisation.end());
        _flows[n.flow].reroute = true;
        n.high_utilisation.clear();
        _free_notes.push_back(k.roce.psn);
    }

    // The end of an interval.
    void on_timer(std::uint32_t, std::uint32_t) override
    {
        move_notified();
        notify_collisions();
        for (auto& seen : _port_flows) {
            seen.clear();
        }
        _sim.schedule().push(_sim.now() + _params.interval_ns, event_kind::scheme_timer, 0, 0);
    }

    std::span<const std::uint64_t> counts() const noexcept override { return _counts; }

private:
    void hop(packet& k, reunion_header& h, port_id out);
    void move_notified();
    void notify_collisions();
    // Calls fn(link) for each link of `ports` that leads to a switch.
    template <typename Fn>
    void switch_links(const std::vector<port_id>& ports, Fn&& fn) const
    {
        const auto& topo = _sim.topology();
        for (const auto port : ports) {
            if (!topo.is_host(_sim.ports()[port].to)) {
                fn(port);
            }
        }
    }

    reunion_params _params;
    std::vector<flow_entry> _flows;                          // per testbed flow
    std::vector<std::optional<policy::count_min>> _sketch;  // per node (source switches)
    std::vector<std::vector<std::uint32_t>> _elephants;     // per source switch: its elephant flows
    std::vector<std::vector<port_id>> _avoid;               // per source switch: links notified this interval
    std::vector<dest_table> _dest;                          // per node (destination switches)
    std::vector<notice> _notes;
    std::vector<std::uint32_t> _free_notes;
    std::vector<std::vector<std::uint32_t>> _port_flows;    // per port: elephants seen this interval
    node_random _random;
    std::array<std::uint64_t, reunion_counters.size()> _counts{};
};

std::uint16_t reunion::choose_path(packet& k, topology::node_id at, const candidate_set& cs)
{
    const auto n = static_cast<std::uint32_t>(cs.paths.size());
    auto& rf = _flows[k.flow];
    if (!rf.seen) {
        rf.seen = true;
        rf.path = ecmp_choice(_sim, k, at, n);
    }
    if (!rf.elephant) {
        auto& sketch = _sketch[at];
        if (!sketch) {
            sketch.emplace(_params.cms_depth, _params.cms_width, stream_seed(_sim.seed(), streams::lb, at));
        }
        if (sketch->add(k.hash, k.bytes) >= _params.elephant_bytes) {
            rf.elephant = true;
            _elephants[at].push_back(k.flow);
            ++_counts[elephants_found];
        }
    }
    auto h = header_of<reunion_header>(k);
    h.elephant = rf.elephant;
    set_header(k, h);
    return static_cast<std::uint16_t>(rf.path % n);
}

void reunion::hop(packet& k, reunion_header& h, port_id out)
{
    if (_sim.topology().is_host(_sim.ports()[out].to)) {
        return; // the destination switch's link to the host: not a collision link
    }
    auto& seen = _port_flows[out];
    if (std::find(seen.begin(), seen.end(), k.flow) == seen.end()) {
        seen.push_back(k.flow);
    }
    if (seen.size() > _params.tolerance && !h.marked) {
        h.marked = true; // the first collision on the way is the one to fix first
        h.bottleneck = out;
        set_header(k, h);
        ++_counts[marks];
    }
}

void reunion::move_notified()
{
    // Algorithm 2 at every source switch: the notifications of the interval that ends.
    constexpr std::uint32_t full = std::numeric_limits<std::uint32_t>::max();
    auto& flows = _sim.flows();
    auto& catalog = _sim.candidates();
    for (topology::node_id v = 0; v < _elephants.size(); ++v) {
        auto& mine = _elephants[v];
        std::erase_if(mine, [&](std::uint32_t fid) { return flows[fid].complete(); });
        if (mine.empty()) {
            _avoid[v].clear();
            continue;
        }
        std::unordered_map<port_id, std::uint32_t> links;
        for (const auto fid : mine) {
            const auto& f = flows[fid];
            switch_links(catalog.of(f.spec.src, f.spec.dst).paths[_flows[fid].path].ports,
                         [&](port_id l) { ++links[l]; });
        }
        for (const auto l : _avoid[v]) {
            links[l] = full;
        }
        _avoid[v].clear();
        for (const auto fid : mine) {
            auto& rf = _flows[fid];
            if (!rf.reroute) {
                continue;
            }
            rf.reroute = false;
            const auto& f = flows[fid];
            const auto& cs = catalog.of(f.spec.src, f.spec.dst);
            const auto own = [&](std::int32_t delta) {
                switch_links(cs.paths[rf.path].ports, [&](port_id l) {
                    if (links[l] != full) {
                        links[l] = static_cast<std::uint32_t>(static_cast<std::int32_t>(links[l]) + delta);
                    }
                });
            };
            own(-1); // the flow does not collide with itself
            const auto n = static_cast<std::uint32_t>(cs.paths.size());
            const std::uint32_t first = _random[v].below(n);
            bool moved = false;
            for (std::uint32_t j = 0; j < n && !moved; ++j) {
                const auto candidate = static_cast<std::uint16_t>((first + j) % n);
                if (candidate == rf.path) {
                    continue;
                }
                bool available = true;
                switch_links(cs.paths[candidate].ports, [&](port_id l) {
                    const auto it = links.find(l);
                    available = available && (it == links.end() || it->second < _params.tolerance);
                });
                if (available) {
                    rf.path = candidate;
                    moved = true;
                    ++_counts[reroutes];
                    ++_path_changes;
                }
            }
            own(+1);
        }
    }
}

void reunion::notify_collisions()
{
    // Algorithm 1 at every destination switch: one notification per bottleneck link.
    const auto& flows = _sim.flows();
    auto& catalog = _sim.candidates();
    auto& packets = _sim.packets();
    for (topology::node_id v = 0; v < _dest.size(); ++v) {
        auto& table = _dest[v];
        if (table.bottlenecks.empty()) {
            table.elephants.clear();
            continue;
        }
        std::unordered_map<port_id, std::uint32_t> links;
        for (const auto& [fid, pid] : table.elephants) {
            const auto& f = flows[fid];
            const auto& cs = catalog.of(f.spec.src, f.spec.dst);
            if (const auto j = index_of(cs, pid); j >= 0) {
                switch_links(cs.paths[static_cast<std::size_t>(j)].ports, [&](port_id l) { ++links[l]; });
            }
        }
        std::vector<port_id> high;
        for (const auto& [l, count] : links) {
            if (count > _params.tolerance) {
                high.push_back(l);
            }
        }
        std::sort(high.begin(), high.end()); // a deterministic order (hash maps have none)
        std::vector<std::pair<port_id, std::uint32_t>> marked(table.bottlenecks.begin(), table.bottlenecks.end());
        std::sort(marked.begin(), marked.end());
        for (const auto& [bottleneck, fid] : marked) {
            std::uint32_t index = 0;
            if (_free_notes.empty()) {
                index = static_cast<std::uint32_t>(_notes.size());
                _notes.emplace_back();
            } else {
                index = _free_notes.back();
                _free_notes.pop_back();
            }
            _notes[index] = notice{fid, bottleneck, high};
            const std::uint32_t i = hosts::new_control(packets, roce_op::switch_control, packet_class::plain, true, v,
                                                       _sim.tor_of(flows[fid].spec.src), fid);
            packet& c = packets[i];
            c.roce.psn = index;
            c.hash = mix32(fid ^ 0x27d4eb2du);
            ++_counts[notifies];
            _sim.forward(i, v);
        }
        table.elephants.clear();
        table.bottlenecks.clear();
    }
}

} // namespace

std::unique_ptr<scheme> make_reunion(simulation& sim)
{
    return std::make_unique<reunion>(sim);
}

std::any parse_reunion_params(const config::reader& r, const YAML::Node& n)
{
    const std::string k = "roce.reunion";
    reunion_params p;
    r.expect_map(n, k, {"interval_us", "tolerance", "elephant_bytes", "cms_depth", "cms_width"});
    optional_us(r, n, k, "interval_us", p.interval_ns);
    r.optional_integer(n, k, "tolerance", p.tolerance, 1, 1 << 16);
    r.optional_integer(n, k, "elephant_bytes", p.elephant_bytes, 1, std::int64_t{1} << 50);
    r.optional_integer(n, k, "cms_depth", p.cms_depth, 1, 64);
    r.optional_integer(n, k, "cms_width", p.cms_width, 1, 1 << 24);
    return p;
}

} // namespace laps::fabric::schemes
