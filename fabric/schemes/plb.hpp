#pragma once
// plb: PLB (Qureshi et al., SIGCOMM 2022; paper §IV) on RoCEv2 + DCTCP: the
// host picks the flow's path (first by its 5-tuple hash); a DCTCP round is
// congested when at least half its ACKs echo ECN, and after 12 congested
// rounds in a row (3 when nothing is in flight: no reordering) the flow
// moves to a random other path (the artefact's plbCheckRehash). A
// retransmission timeout pauses repathing for the rest of the run (the
// artefact: 60-120 s). Parameters `roce.plb`.

#include "fabric/schemes/scheme.hpp"

#include <any>
#include <array>
#include <cstdint>
#include <memory>
#include <string_view>

namespace laps::fabric::schemes {

struct plb_params {
    std::uint32_t forced_rounds = 12;   // PLB_REHASH_ROUNDS (paper §IV-B: 12)
    std::uint32_t idle_rounds = 3;      // IDLE_REHASH_ROUNDS: repath when nothing is in flight
    double congested_fraction = 0.5;    // a round is congested when >= this share of ACKs echo ECN
};

inline constexpr std::array<std::string_view, 3> plb_counters{
    "plb_repaths",
    "plb_rounds",    // DCTCP rounds PLB looked at
    "plb_congested", // of which congested (>= congested_fraction ECN)
};

std::unique_ptr<scheme> make_plb(simulation& sim);
std::any parse_plb_params(const config::reader& r, const YAML::Node& n);

} // namespace laps::fabric::schemes
