#pragma once
// The command line after EAL's arguments:
//   laps [EAL args] -- --config FILE.yaml [--cmdline-file F] [--no-interactive] [--clock-ahead-ms MS]

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace laps::app {

struct options {
    std::string config;
    // Console commands to run at start (docs/console.md).
    std::optional<std::string> cmdline_file;
    bool interactive = true;
    // Where this process's clock starts (tests of hosts whose clocks differ).
    std::int64_t clock_ahead_ns = 0;
    bool help = false;
};

// `args` are the application arguments (after "--"). Throws usage_error.
options parse_options(const std::vector<std::string>& args);

// True when the command line asks for --help anywhere after "--" (or as the
// only argument), so that help needs no EAL.
bool wants_help(int argc, char** argv);

extern const char* const usage_text;

} // namespace laps::app
