#pragma once
// Helpers to read YAML into plain structs with errors a user can act on:
//   configs/host.yaml:12:18: congestion.rate_cap_gbps: expected a number in (0, 10000], got 'fast'
// Every error names the file, the line and column (1-based) and the key path.
// Unknown and repeated keys are errors too: a misspelt key or a second value
// for a key must never be silently ignored.

#include <yaml-cpp/yaml.h>

#include "common/names.hpp"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace laps::config {

class config_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class reader {
public:
    explicit reader(std::string file) : _file(std::move(file)) {}

    const std::string& file() const noexcept { return _file; }

    // "file:line:col: key: what"
    [[noreturn]] void fail(const YAML::Node& at, std::string_view key, std::string_view what) const;

    // `node` must be a map whose keys are all in `allowed`, each at most once.
    void expect_map(const YAML::Node& node, std::string_view key, std::initializer_list<std::string_view> allowed) const;
    // The same, for keys only known at run time (sections other modules add).
    void expect_map(const YAML::Node& node, std::string_view key, std::span<const std::string_view> allowed) const;
    void expect_list(const YAML::Node& node, std::string_view key) const;

    // `parent[name]`, required or not. Key paths join with '.'.
    static std::string join(std::string_view parent, std::string_view name);
    YAML::Node require(const YAML::Node& parent, std::string_view parent_key, std::string_view name) const;

    std::int64_t integer(const YAML::Node& node, std::string_view key, std::int64_t min, std::int64_t max) const;
    double number(const YAML::Node& node, std::string_view key, double min, double max, bool min_open = false) const;
    bool boolean(const YAML::Node& node, std::string_view key) const;
    std::string string(const YAML::Node& node, std::string_view key) const;
    std::string choice(const YAML::Node& node, std::string_view key, std::initializer_list<std::string_view> options) const;
    // The enum value named by `node` in `table` (common/names.hpp); an error lists every name.
    template <typename Table>
    auto choice_of(const YAML::Node& node, std::string_view key, const Table& table) const
    {
        const std::string v = string(node, key);
        const auto found = common::find_named(table, v);
        if (!found) {
            fail(node, key, "'" + v + "' is not one of: " + common::joined_names(table));
        }
        return *found;
    }

    // Optional members: leave `out` unchanged when `parent` has no `name`.
    template <typename T>
    void optional_integer(const YAML::Node& parent, std::string_view parent_key, std::string_view name, T& out,
                          std::int64_t min, std::int64_t max) const
    {
        if (const auto n = parent[std::string(name)]) {
            out = static_cast<T>(integer(n, join(parent_key, name), min, max));
        }
    }
    void optional_number(const YAML::Node& parent, std::string_view parent_key, std::string_view name, double& out,
                         double min, double max, bool min_open = false) const;
    void optional_boolean(const YAML::Node& parent, std::string_view parent_key, std::string_view name,
                          bool& out) const;

private:
    std::string _file;
};

// Loads a file into a node; a YAML syntax error becomes a config_error with
// file:line:col. The document must be a map.
// Config files (laps, app, scenario, topology, console `load`) are at most
// this large; larger ones, NUL bytes and second YAML documents are errors.
inline constexpr std::size_t max_config_bytes = std::size_t{16} << 20;
// A config file's text, refused with config_error past max_config_bytes.
std::string read_config_text(const std::string& path);
YAML::Node load_yaml_file(const std::string& path);
YAML::Node load_yaml_string(const std::string& text, const std::string& name);

} // namespace laps::config
