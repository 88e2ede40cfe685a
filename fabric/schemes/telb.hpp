#pragma once
// telb: TELB (seed 004): a policy table at the source ToR pins every flow of
// a traffic item (a tenant, a job) to one candidate path; flows no rule
// matches are pinned by their 5-tuple hash (static ECMP). Parameters
// `roce.telb`: a list of {item, path}.

#include "fabric/schemes/scheme.hpp"

#include <any>
#include <array>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace laps::fabric::schemes {

struct telb_rule {
    std::uint32_t item = 0; // traffic item index (traffic[i])
    std::uint16_t path = 0; // candidate index (modulo the pair's candidates)
};
using telb_rules = std::vector<telb_rule>;

inline constexpr std::array<std::string_view, 1> telb_counters{"telb_pinned"}; // flows a rule pinned

std::unique_ptr<scheme> make_telb(simulation& sim);
// Into telb_rules.
std::any parse_telb_params(const config::reader& r, const YAML::Node& n);

} // namespace laps::fabric::schemes
