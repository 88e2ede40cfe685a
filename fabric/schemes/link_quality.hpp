#pragma once
// The AI-fabric chapter's quality-aware load balancing at the source ToR
// (seed 004, "DLB considers link utilization, queue depth"; "GLB
// heartbeats"): a new flowlet takes the candidate whose links have the best
// quality, a 3-bit level of the larger of a link's load (CONGA's DRE,
// roce.conga) and its queue depth against queue_full_bytes; ties at random.
// DLB looks at the ToR's own uplink, GLB also at the path's remote links as
// their switches last advertised them (glb.hpp). Parameters `roce.dlb`.

#include "fabric/schemes/dre.hpp"
#include "fabric/schemes/flowlets.hpp"
#include "fabric/schemes/node_random.hpp"
#include "fabric/schemes/scheme.hpp"

#include <any>
#include <array>
#include <cstdint>
#include <vector>

namespace laps::fabric::schemes {

struct dlb_params {
    std::uint64_t queue_full_bytes = 100'000;       // the queue depth of the worst level
    common::time_ns heartbeat_ns = 50 * common::ns_per_us; // GLB's advertisements (the seed's example: 20 ms)
};

std::any parse_dlb_params(const config::reader& r, const YAML::Node& n);

class quality_scheme : public scheme {
public:
    std::uint16_t choose_path(packet& k, topology::node_id at, const candidate_set& cs) override;
    // The DRE decays as links are read: read it where CONGA's DATA would.
    void on_hop(packet& k, port_id out) override;
    void on_dequeue(port_id p, std::uint32_t bytes) override;

protected:
    // `advertised`: per port, the quality its switch last advertised (GLB);
    // empty: the ToR's own uplink only (DLB).
    quality_scheme(simulation& sim, const std::vector<std::uint8_t>& advertised);

    // Port `p`'s quality now (0 best).
    std::uint8_t quality(port_id p);

    dlb_params _params;
    flowlet_table _flowlets;

private:
    std::uint16_t pick(topology::node_id at, const candidate_set& cs);

    dre_table _dre;
    node_random _random;
    const std::vector<std::uint8_t>& _advertised;
    double _levels; // of the quantisation (roce.conga.quantize_bits)
};

} // namespace laps::fabric::schemes
