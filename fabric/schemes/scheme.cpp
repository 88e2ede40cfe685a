#include "fabric/schemes/scheme.hpp"

#include "fabric/simulation.hpp"

namespace laps::fabric::schemes {

std::uint16_t ecmp_choice(const simulation& sim, const packet& k, topology::node_id at, std::uint32_t n) noexcept
{
    return static_cast<std::uint16_t>(mix32(k.hash ^ sim.nodes()[at].ecmp_salt) % n);
}

std::uint16_t scheme::choose_path(packet& k, topology::node_id at, const candidate_set& cs)
{
    return ecmp_choice(_sim, k, at, static_cast<std::uint32_t>(cs.paths.size()));
}

} // namespace laps::fabric::schemes
