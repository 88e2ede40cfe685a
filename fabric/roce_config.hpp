#pragma once
// The scenario section `roce:` (docs/testbed.md, Schemes): the RoCEv2 NIC
// model's and the baseline schemes' parameters. Unknown keys are errors.

#include "config/reader.hpp"
#include "fabric/roce_params.hpp"

namespace laps::fabric {

void parse_roce_section(const config::reader& r, const YAML::Node& n, roce_params& out);

} // namespace laps::fabric
