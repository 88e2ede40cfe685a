#pragma once
// Argument parsing for console commands whose values rte_cmdline has no token
// for (numbers with a fraction, pid lists, key=value lists). Errors name the
// argument and what was expected.

#include "tables/table_spec.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace laps::console {

// A finite number in [min, max]; `what` names it in the error.
double parse_number(std::string_view text, std::string_view what, double min, double max);

// "0,1,2": 1 to 16 pids, no repeats.
std::vector<tables::path_id> parse_pid_list(std::string_view text);

// "base_ns=20000 uncongested_ns=15000 anchors=7,8 hops=3 valid=true" for `pid`.
tables::pit_row parse_pit_row(tables::path_id pid, std::string_view rest);

} // namespace laps::console
