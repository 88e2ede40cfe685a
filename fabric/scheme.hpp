#pragma once
// Load-balancing schemes the testbed compares (paper §IV: LAPS against ECMP,
// LetFlow, CONGA, ConWeave and PLB; issue 17: the other seeds' systems, REPS,
// Hopper, FlowBender, Reunion, DLB, GLB, TELB, spraying), chosen by name: the scenario key
// `scheme:` or `laps-testbed --scheme NAME`. One registry lists them all, so
// the help text, the scenario parser and the sweep runner agree.
//
// A scheme is a transport on the hosts plus a path choice at the host or at
// the switches:
//   - laps: the real LAPS engine on every host (pipeline::engine), its own
//     transport (Alg. 2 AIMD, Alg. 3 selective resend);
//   - the others: a RoCEv2 NIC model on every host (fabric/roce_nic.hpp:
//     DCQCN or DCTCP, Go-Back-N or IRN) and the scheme's path choice among
//     the same candidate paths LAPS uses (topology::path_planner), made where
//     the original makes it (docs/testbed.md, Schemes).

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace laps::fabric {

enum class scheme : std::uint8_t {
    laps, ecmp, letflow, conga, plb, conweave,
    ecmp_noqp, rps, reps, hopper, flowbender, selective, dlb, glb, telb, reunion,
};

// What the hosts run.
enum class transport : std::uint8_t {
    laps_engine, // pipeline::engine
    roce_dcqcn,  // RoCEv2 NIC, DCQCN rate control (ConWeave/HPCC artefact "Mellanox" DCQCN)
    roce_dctcp,  // RoCEv2 NIC, DCTCP rate and window (the artefact's DCTCP, used by PLB)
};

// Where the path decision is made.
enum class placement : std::uint8_t {
    host,       // the sender's NIC (LAPS engine, PLB's repathing)
    source_tor, // the sender's top-of-rack switch (ECMP, LetFlow, CONGA, ConWeave's rerouting)
};

struct scheme_info {
    std::string_view name;
    scheme id;
    transport hosts;
    placement where;
    std::string_view summary;
    // Sends one flow's packets over several paths at once: the NIC needs
    // out-of-order delivery (IRN), whatever the fabric's flow control.
    bool reorders = false;
};

inline constexpr std::array scheme_registry{
    scheme_info{"laps", scheme::laps, transport::laps_engine, placement::host,
                "the LAPS engine: latency-aware spraying (Eq. 1), AIMD (Alg. 2), selective resend (Alg. 3)"},
    scheme_info{"ecmp", scheme::ecmp, transport::roce_dcqcn, placement::source_tor,
                "RoCEv2 + DCQCN; one candidate path per flow by 5-tuple hash (QP entropy in the UDP source port)"},
    scheme_info{"letflow", scheme::letflow, transport::roce_dcqcn, placement::source_tor,
                "RoCEv2 + DCQCN; a random candidate path per flowlet (idle gap > flowlet timeout, 50 us)"},
    scheme_info{"conga", scheme::conga, transport::roce_dcqcn, placement::source_tor,
                "RoCEv2 + DCQCN; per flowlet the least congested path by leaf-to-leaf DRE feedback"},
    scheme_info{"plb", scheme::plb, transport::roce_dctcp, placement::host,
                "RoCEv2 + DCTCP; a random new path after N consecutive congested rounds (12 forced, 3 when idle)"},
    scheme_info{"conweave", scheme::conweave, transport::roce_dcqcn, placement::source_tor,
                "RoCEv2 + DCQCN; source-ToR rerouting on slow RTT replies, destination-ToR reordering"},
    scheme_info{"ecmp_noqp", scheme::ecmp_noqp, transport::roce_dcqcn, placement::source_tor,
                "RoCEv2 + DCQCN; ECMP without QP entropy (fixed UDP source port): a host pair's QPs share a path"},
    scheme_info{"rps", scheme::rps, transport::roce_dcqcn, placement::host,
                "RoCEv2 + DCQCN + IRN; oblivious packet spraying: a random UDP source port per packet", true},
    scheme_info{"reps", scheme::reps, transport::roce_dcqcn, placement::host,
                "RoCEv2 + DCQCN + IRN; REPS: per-packet entropies recycled from unmarked ACKs, frozen on timeouts",
                true},
    scheme_info{"hopper", scheme::hopper, transport::roce_dcqcn, placement::host,
                "RoCEv2 + DCQCN + IRN; Hopper: RTT-probed power-of-two repathing above 1.5x / 2.5x base RTT", true},
    scheme_info{"flowbender", scheme::flowbender, transport::roce_dcqcn, placement::host,
                "RoCEv2 + DCQCN; FlowBender: a random new path after a round with > 5% of ACKs ECN-marked"},
    scheme_info{"selective", scheme::selective, transport::roce_dcqcn, placement::host,
                "RoCEv2 + DCQCN + IRN; selective spraying: per-packet spraying for elephants, one path for the rest",
                true},
    scheme_info{"dlb", scheme::dlb, transport::roce_dcqcn, placement::source_tor,
                "RoCEv2 + DCQCN; DLB: per flowlet the best local uplink by quantised load and queue depth"},
    scheme_info{"glb", scheme::glb, transport::roce_dcqcn, placement::source_tor,
                "RoCEv2 + DCQCN; GLB: per flowlet the best path by local and heartbeat-advertised remote link quality"},
    scheme_info{"telb", scheme::telb, transport::roce_dcqcn, placement::source_tor,
                "RoCEv2 + DCQCN; TELB: each flow pinned to a path by a policy table (traffic item -> path)"},
    scheme_info{"reunion", scheme::reunion, transport::roce_dcqcn, placement::source_tor,
                "RoCEv2 + DCQCN; Reunion: CMS elephants, destination-switch collision notices, source-switch reroutes"},
};

constexpr std::optional<scheme> find_scheme(std::string_view name) noexcept
{
    for (const auto& s : scheme_registry) {
        if (s.name == name) {
            return s.id;
        }
    }
    return std::nullopt;
}

constexpr const scheme_info& info(scheme s) noexcept
{
    for (const auto& i : scheme_registry) {
        if (i.id == s) {
            return i;
        }
    }
    return scheme_registry[0];
}

constexpr std::string_view to_string(scheme s) noexcept
{
    return info(s).name;
}

constexpr bool uses_roce(scheme s) noexcept
{
    return info(s).hosts != transport::laps_engine;
}

} // namespace laps::fabric
