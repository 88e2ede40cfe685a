#include "config/reader.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace laps::config {

namespace {

std::string describe(const YAML::Node& node)
{
    if (!node.IsDefined() || node.IsNull()) {
        return "nothing";
    }
    if (node.IsScalar()) {
        return "'" + node.Scalar() + "'";
    }
    if (node.IsSequence()) {
        return "a list";
    }
    return "a map";
}

std::string position(const std::string& file, const YAML::Mark& mark)
{
    if (mark.is_null()) {
        return file;
    }
    return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

} // namespace

void reader::fail(const YAML::Node& at, std::string_view key, std::string_view what) const
{
    const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
    std::string msg = position(_file, mark) + ": ";
    if (!key.empty()) {
        msg += std::string(key) + ": ";
    }
    msg += what;
    throw config_error(msg);
}

std::string reader::join(std::string_view parent, std::string_view name)
{
    if (parent.empty()) {
        return std::string(name);
    }
    return std::string(parent) + "." + std::string(name);
}

void reader::expect_map(const YAML::Node& node, std::string_view key,
                        std::initializer_list<std::string_view> allowed) const
{
    if (!node.IsMap()) {
        fail(node, key, "expected a map, got " + describe(node));
    }
    // yaml-cpp keeps both entries of a repeated key and lookups see the
    // first: a second value would be silently ignored, so it is an error.
    std::vector<std::pair<std::string, YAML::Mark>> seen;
    for (const auto& kv : node) {
        const std::string name = kv.first.as<std::string>();
        const auto earlier = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == name; });
        if (earlier != seen.end()) {
            fail(kv.first, join(key, name), "key given twice (first at " + position(_file, earlier->second) + ")");
        }
        seen.emplace_back(name, kv.first.Mark());
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
            std::string known;
            for (const auto a : allowed) {
                known += known.empty() ? "" : ", ";
                known += a;
            }
            fail(kv.first, join(key, name), "unknown key (known here: " + known + ")");
        }
    }
}

void reader::expect_list(const YAML::Node& node, std::string_view key) const
{
    if (!node.IsSequence()) {
        fail(node, key, "expected a list, got " + describe(node));
    }
}

YAML::Node reader::require(const YAML::Node& parent, std::string_view parent_key, std::string_view name) const
{
    const YAML::Node n = parent[std::string(name)];
    if (!n) {
        fail(parent, join(parent_key, name), "missing (required)");
    }
    return n;
}

std::int64_t reader::integer(const YAML::Node& node, std::string_view key, std::int64_t min, std::int64_t max) const
{
    std::int64_t v = 0;
    if (!node.IsScalar() || !YAML::convert<std::int64_t>::decode(node, v)) {
        fail(node, key, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                            describe(node));
    }
    if (v < min || v > max) {
        fail(node, key, "value " + std::to_string(v) + " is out of range [" + std::to_string(min) + ", " +
                            std::to_string(max) + "]");
    }
    return v;
}

double reader::number(const YAML::Node& node, std::string_view key, double min, double max, bool min_open) const
{
    double v = 0;
    std::ostringstream range;
    range << (min_open ? "(" : "[") << min << ", " << max << "]";
    if (!node.IsScalar() || !YAML::convert<double>::decode(node, v) || !std::isfinite(v)) {
        fail(node, key, "expected a number in " + range.str() + ", got " + describe(node));
    }
    if (v < min || v > max || (min_open && v == min)) {
        fail(node, key, "value " + node.Scalar() + " is out of range " + range.str());
    }
    return v;
}

bool reader::boolean(const YAML::Node& node, std::string_view key) const
{
    bool v = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, v)) {
        fail(node, key, "expected true or false, got " + describe(node));
    }
    return v;
}

std::string reader::string(const YAML::Node& node, std::string_view key) const
{
    if (!node.IsScalar()) {
        fail(node, key, "expected a string, got " + describe(node));
    }
    return node.Scalar();
}

std::string reader::choice(const YAML::Node& node, std::string_view key,
                           std::initializer_list<std::string_view> options) const
{
    const std::string v = string(node, key);
    if (std::find(options.begin(), options.end(), v) == options.end()) {
        std::string known;
        for (const auto o : options) {
            known += known.empty() ? "" : ", ";
            known += o;
        }
        fail(node, key, "'" + v + "' is not one of: " + known);
    }
    return v;
}

void reader::optional_number(const YAML::Node& parent, std::string_view parent_key, std::string_view name,
                             double& out, double min, double max, bool min_open) const
{
    if (const auto n = parent[std::string(name)]) {
        out = number(n, join(parent_key, name), min, max, min_open);
    }
}

void reader::optional_boolean(const YAML::Node& parent, std::string_view parent_key, std::string_view name,
                              bool& out) const
{
    if (const auto n = parent[std::string(name)]) {
        out = boolean(n, join(parent_key, name));
    }
}

YAML::Node load_yaml_string(const std::string& text, const std::string& name)
{
    YAML::Node doc;
    try {
        doc = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw config_error(position(name, e.mark) + ": YAML syntax error: " + e.msg);
    }
    if (!doc.IsMap()) {
        throw config_error(name + ": expected a YAML map at the top level");
    }
    return doc;
}

YAML::Node load_yaml_file(const std::string& path)
{
    std::ifstream in(path);
    if (!in) {
        throw config_error(path + ": cannot open file");
    }
    std::stringstream text;
    text << in.rdbuf();
    return load_yaml_string(text.str(), path);
}

} // namespace laps::config
