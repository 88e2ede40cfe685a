#pragma once
// The load-balancing schemes the testbed compares (paper §IV: LAPS against
// ECMP, LetFlow, CONGA, ConWeave and PLB; the other seeds' systems: REPS,
// Hopper, FlowBender, Reunion, DLB, GLB, TELB, spraying), chosen by name:
// the scenario key `scheme:` or `laps-testbed --scheme NAME`
// (`--list-schemes` prints them). One row per scheme, in registry.cpp: the
// help text, the scenario parser, the sweep runner and the reports all read
// this one table.
//
// A scheme is a transport on the hosts plus a path choice at the host or at
// the switches (docs/testbed.md, Schemes):
//   - laps: the real LAPS engine on every host (pipeline::engine), its own
//     transport (Alg. 2 AIMD, Alg. 3 selective resend), its path choice the
//     engine's (selection.policy: Eq. 1, or the other seeds' policies);
//   - the others: a RoCEv2 NIC model on every host (fabric/hosts/roce_nic.hpp:
//     DCQCN or DCTCP, Go-Back-N or IRN) and the scheme's path choice among
//     the same candidate paths LAPS uses (fabric/candidates.hpp), made where
//     the original makes it (scheme.hpp's hooks).
//
// Adding a scheme: its own files in this folder (a class deriving from
// scheme, its factory, its counters and parameter section if any), one row
// in registry.cpp, and its test (tests/testbed/).

#include "config/reader.hpp"

#include <any>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace laps::fabric {
class simulation;
}

namespace laps::fabric::schemes {

class scheme;

// What the hosts run.
enum class transport : std::uint8_t {
    laps_engine, // pipeline::engine (fabric/hosts/laps_hosts.hpp)
    roce_dcqcn,  // RoCEv2 NIC, DCQCN rate control (the baselines' artefact "Mellanox" DCQCN)
    roce_dctcp,  // RoCEv2 NIC, DCTCP rate and window (the artefact's DCTCP)
};

struct info {
    std::string_view name;
    transport hosts;
    // Sends one flow's packets over several paths at once: the NIC needs
    // out-of-order delivery (IRN), whatever the fabric's flow control.
    bool reorders;
    std::string_view summary;
    // Builds the scheme's state for a run (after the hosts and flows exist;
    // it may schedule its first timers).
    std::unique_ptr<scheme> (*make)(simulation& sim);
    // Its counters in the reports, in the order scheme::counts() gives them.
    // A name several rows share is one report column (the first row's place).
    std::span<const std::string_view> counters = {};
    // Its parameter section `roce.<params_key>`, read into its own type.
    std::string_view params_key = {};
    std::any (*parse_params)(const config::reader& r, const YAML::Node& section) = nullptr;
};

// Every scheme, in the order of help text and reports.
std::span<const info> registry() noexcept;
const info* find(std::string_view name) noexcept;
// laps, the scenario default.
const info& default_scheme() noexcept;
// "laps, ecmp, ...": for errors and help.
std::string names();

// The scheme counters of a run of `row` (its state `s`), as the reports list
// them: path changes, then every row's counters in registry order, each name
// once, where it first appears (0 for the other schemes' counters), so that
// runs of different schemes have the same columns.
std::vector<std::pair<std::string_view, std::uint64_t>> counter_report(const info& row, const scheme& s);

} // namespace laps::fabric::schemes
