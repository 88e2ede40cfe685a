#pragma once
// Topology files (format: docs/topology.md).
//
// A file either names a builder with its parameters (`builder:` plus optional
// `overrides:`), or lists `hosts:`, `switches:` and `links:` explicitly. The
// writer always emits the explicit form; reading it back gives the same fabric.

#include "topology/model.hpp"

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>

namespace laps::topology {

// Throws topology_error with "file:line: " and the element at fault.
fabric_spec parse_fabric_spec(std::string_view yaml_text, const std::string& source_name);
fabric parse_fabric(std::string_view yaml_text, const std::string& source_name = "<yaml>");
// Topology files are at most this large (a generated 10,000-host fabric is a
// few MB); larger ones and NUL bytes are errors, found before parsing.
inline constexpr std::size_t max_topology_bytes = std::size_t{64} << 20;
fabric load_fabric(const std::string& path);

void write_fabric_yaml(std::ostream& out, const fabric& f);
std::string to_yaml(const fabric& f);

// The laps-paths --topology argument: an existing file, or a builder
// ("dragonfly", "fat_tree:k=8"). Throws topology_error otherwise.
fabric open_topology(std::string_view argument);

} // namespace laps::topology
