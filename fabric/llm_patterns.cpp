#include "fabric/llm_patterns.hpp"
#include "common/rng.hpp"

#include <algorithm>
#include <cmath>

namespace laps::fabric {

std::vector<flow_spec> llm_flows(const llm_traffic& item, std::size_t hosts, double scale, std::uint32_t tag,
                                 std::uint64_t seed)
{
    std::vector<topology::node_id> members = item.hosts;
    if (members.empty()) {
        for (std::size_t h = 0; h < hosts; ++h) {
            members.push_back(static_cast<topology::node_id>(h));
        }
    }
    const auto bytes = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::llround(static_cast<double>(item.message_bytes) * scale)));
    const auto start = static_cast<time_ns>(std::llround(static_cast<double>(item.start_ns) * scale));
    std::vector<flow_spec> out;
    const auto add = [&](topology::node_id s, topology::node_id d) { out.push_back({s, d, bytes, start, tag}); };
    switch (item.pattern) {
    case llm_pattern::all2all:
        for (const auto s : members) {
            for (const auto d : members) {
                if (s != d) {
                    add(s, d);
                }
            }
        }
        break;
    case llm_pattern::allreduce:
        for (const auto s : members) {
            if (s != item.root) {
                add(s, item.root);
            }
        }
        break;
    case llm_pattern::allscatter:
        for (const auto d : members) {
            if (d != item.root) {
                add(item.root, d);
            }
        }
        break;
    case llm_pattern::permutation: {
        // Sattolo's shuffle: a uniformly random single cycle, so nobody
        // draws itself and everyone receives exactly once.
        std::vector<topology::node_id> to = members;
        common::rng rng(seed);
        for (std::size_t i = to.size(); i > 1; --i) {
            std::swap(to[i - 1], to[rng.below(static_cast<std::uint32_t>(i - 1))]);
        }
        for (std::size_t i = 0; i < members.size() && members.size() > 1; ++i) {
            add(members[i], to[i]);
        }
        break;
    }
    }
    return out;
}

} // namespace laps::fabric
