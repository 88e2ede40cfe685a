#pragma once
// Control-path messages on stdout, one line each, prefixed "laps: ". Never
// called from a worker's loop.

#include <cstdio>
#include <string>

namespace laps::app {

inline void log_line(const std::string& text)
{
    std::fputs(("laps: " + text + "\n").c_str(), stdout);
    std::fflush(stdout);
}

} // namespace laps::app
