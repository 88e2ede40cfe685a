#pragma once
// The scenario section `roce:` (docs/testbed.md, Schemes): the RoCEv2 NIC
// model's parameters, and the schemes' own sections (`roce.<key>`, read by
// their registry rows into `schemes`). Unknown keys are errors.

#include "config/reader.hpp"
#include "fabric/hosts/roce_params.hpp"
#include "fabric/schemes/parameters.hpp"

namespace laps::fabric::hosts {

void parse_roce_section(const config::reader& r, const YAML::Node& n, roce_params& out,
                        schemes::parameters& schemes);

} // namespace laps::fabric::hosts
