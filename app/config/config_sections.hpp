#pragma once
// What the two halves of the config reader share (app/config/ only):
// config.cpp reads the process-wide sections and the file's shape,
// instance_config.cpp the sections of one instance.

#include "app/config/config.hpp"
#include "config/reader.hpp"

#include <yaml-cpp/yaml.h>

#include <string>

namespace laps::app {

inline common::time_ns ms_to_ns(double ms)
{
    return static_cast<common::time_ns>(ms * static_cast<double>(common::ns_per_ms));
}

// `lcores:`: control and idle when `global` (the file's top level), workers
// when `local` (an instance's own keys; `inst` receives them).
void parse_lcores(const config::reader& r, const YAML::Node& n, bool global, bool local, app_config& app,
                  instance_config* inst);

// The instance keys of `n` (top level of a single-instance file, or one entry
// of `instances:`).
instance_config parse_instance(const config::reader& r, const YAML::Node& n, const std::string& name,
                               bool link_allowed, app_config& app, bool single);

} // namespace laps::app
