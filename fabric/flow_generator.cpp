#include "fabric/flow_generator.hpp"

#include "common/rng.hpp"
#include "fabric/llm_patterns.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace laps::fabric {

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b) noexcept
{
    // Three rounds of SplitMix64 over (seed, a, b): nearby inputs give unrelated streams.
    common::rng r(seed);
    std::uint64_t x = r() ^ (a * 0x9e3779b97f4a7c15ULL);
    common::rng r2(x);
    x = r2() ^ (b * 0xbf58476d1ce4e5b9ULL);
    common::rng r3(x);
    return r3();
}

namespace {

constexpr std::size_t max_flows = 20'000'000;

void poisson_flows(const poisson_traffic& p, std::size_t hosts, double scale, std::uint64_t seed, std::uint32_t tag,
                   const std::vector<double>& host_rate_bps, std::vector<flow_spec>& out)
{
    // Sender -> its receivers.
    std::map<topology::node_id, std::vector<topology::node_id>> receivers;
    if (p.pairs.empty()) {
        for (std::size_t s = 0; s < hosts; ++s) {
            auto& list = receivers[static_cast<topology::node_id>(s)];
            for (std::size_t d = 0; d < hosts; ++d) {
                if (d != s) {
                    list.push_back(static_cast<topology::node_id>(d));
                }
            }
        }
    } else {
        for (const auto& [s, d] : p.pairs) {
            receivers[s].push_back(d);
        }
    }
    const auto start = static_cast<double>(p.start_ns) * scale;
    const double end = start + static_cast<double>(p.duration_ns) * scale;
    for (const auto& [sender, list] : receivers) {
        common::rng rng(stream_seed(seed, streams::poisson, (std::uint64_t{tag} << 32) | sender));
        // Arrivals per ns.
        const double rate = p.load * host_rate_bps[sender] / 8.0 / p.sizes->mean_bytes() / 1e9;
        double t = start;
        while (true) {
            t += -std::log(1.0 - rng.unit()) / rate;
            if (t >= end) {
                break;
            }
            const auto dst = list[rng.below(static_cast<std::uint32_t>(list.size()))];
            out.push_back({sender, dst, p.sizes->sample(rng), static_cast<time_ns>(t), tag});
            if (out.size() > max_flows) {
                throw std::runtime_error("traffic: more than " + std::to_string(max_flows) +
                                         " flows; lower the load, the duration or the scale");
            }
        }
    }
}

} // namespace

std::vector<flow_spec> generate_flows(const scenario& s, double scale, std::uint64_t seed,
                                      const std::vector<double>& host_rate_bps, std::optional<double> load)
{
    std::vector<flow_spec> out;
    const std::size_t hosts = s.topology->host_count();
    for (std::size_t i = 0; i < s.traffic.size(); ++i) {
        const auto& item = s.traffic[i];
        const auto tag = static_cast<std::uint32_t>(i);
        switch (item.type) {
        case traffic_item::kind::poisson: {
            auto p = item.poisson;
            p.load = load.value_or(p.load);
            poisson_flows(p, hosts, scale, seed, tag, host_rate_bps, out);
            break;
        }
        case traffic_item::kind::llm: {
            auto flows = llm_flows(item.llm, hosts, scale, tag, stream_seed(seed, streams::permutation, tag));
            if (item.llm.poisson_starts_ns > 0 && !flows.empty()) {
                // n flows start as a Poisson process of rate n / window, in
                // flow order (the LAPS authors' artefact,
                // userdefinedfunction.cc generate_LLMA_rdma_flows_on_nodes).
                common::rng rng(stream_seed(seed, streams::llm_starts, tag));
                const double mean = static_cast<double>(item.llm.poisson_starts_ns) * scale /
                                    static_cast<double>(flows.size());
                double t = 0;
                for (auto& f : flows) {
                    t += -std::log(1.0 - rng.unit()) * mean;
                    f.start += static_cast<time_ns>(std::llround(t));
                }
            }
            out.insert(out.end(), flows.begin(), flows.end());
            break;
        }
        case traffic_item::kind::flows:
            for (auto f : item.flows) {
                f.bytes = std::max<std::uint64_t>(
                    1, static_cast<std::uint64_t>(std::llround(static_cast<double>(f.bytes) * scale)));
                f.start = static_cast<time_ns>(std::llround(static_cast<double>(f.start) * scale));
                f.tag = tag;
                out.push_back(f);
            }
            break;
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const flow_spec& a, const flow_spec& b) { return a.start < b.start; });
    return out;
}

} // namespace laps::fabric
