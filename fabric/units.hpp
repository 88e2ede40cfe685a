#pragma once
// Scenario keys with units (`..._us`, `..._mbps`), read into the testbed's
// units (ns, b/s) with the range checks and errors of config::reader.

#include "common/time.hpp"
#include "config/reader.hpp"

#include <cmath>
#include <string>

namespace laps::fabric {

// parent.name in microseconds (0..1e9), kept in ns; `positive`: 0 is an error.
inline void optional_us(const config::reader& r, const YAML::Node& n, const std::string& parent, const char* name,
                        common::time_ns& out, bool positive = true)
{
    if (const auto v = n[name]) {
        const std::string key = parent + "." + name;
        out = static_cast<common::time_ns>(std::llround(r.number(v, key, 0.0, 1e9) * 1000.0));
        if (positive && out == 0) {
            r.fail(v, key, "must be positive");
        }
    }
}

// parent.name in Mb/s (above 0, at most 1e7), kept in b/s.
inline void optional_mbps(const config::reader& r, const YAML::Node& n, const std::string& parent, const char* name,
                          double& out)
{
    if (const auto v = n[name]) {
        out = r.number(v, parent + "." + name, 0.0, 1e7, true) * 1e6;
    }
}

} // namespace laps::fabric
