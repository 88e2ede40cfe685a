#pragma once
// Host-side schemes steer a DATA packet through the switches' ECMP by the
// entropy in its UDP source port (RoCEv2: 0xC000 and 14 bits): the packet
// carries the QP's current entropy, and its 5-tuple hash follows.

#include "fabric/hosts/roce_nic.hpp"
#include "fabric/simulation.hpp"

namespace laps::fabric::schemes {

inline void steer(const simulation& sim, const flow& f, const hosts::roce_qp& q, packet& k) noexcept
{
    const auto& hosts = sim.hosts();
    k.roce.entropy = q.entropy;
    k.hash = hosts::roce_hash(hosts[f.spec.src], hosts[f.spec.dst], hosts::entropy_port(q.entropy));
}

} // namespace laps::fabric::schemes
