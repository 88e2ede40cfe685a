#pragma once
// Start-up errors. Every one names the thing at fault (config key, port,
// lcore, mempool) and what to do; main() prints it as "laps: <message>" and
// exits non-zero. Config file errors are config::config_error
// ("file:line:col: key: what").

#include <stdexcept>
#include <string>

namespace laps::app {

class startup_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The command line is wrong; main() adds "(see --help)".
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace laps::app
