#include "config/reader.hpp"

#include "common/read_bounded.hpp"

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
    expect_map(node, key, std::span<const std::string_view>(allowed.begin(), allowed.size()));
}

void reader::expect_map(const YAML::Node& node, std::string_view key, std::span<const std::string_view> allowed) const
{
    if (!node.IsMap()) {
        fail(node, key, "expected a map, got " + describe(node));
    }
    // yaml-cpp keeps both entries of a repeated key and lookups see the
    // first: a second value would be silently ignored, so it is an error.
    std::vector<std::pair<std::string, YAML::Mark>> seen;
    for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
            fail(kv.first, key, "a key must be a plain name, got " + describe(kv.first));
        }
        const std::string name = kv.first.Scalar();
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

namespace {

// The 0-based line where a second YAML document starts, or -1. yaml-cpp's
// Load() reads the first document and ignores the rest silently, and its
// LoadAll() loops forever on some malformed input (yaml-cpp 0.7, found by
// fuzz_app_config), so the markers are found here: a line starting with
// "---" after content, or content after a "..." line (YAML 1.2 §9.1).
int second_document_line(const std::string& text)
{
    bool content = false;
    bool ended = false;
    int line = 0;
    for (std::size_t start = 0; start < text.size(); ++line) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        const std::string_view l(text.data() + start, end - start);
        start = end + 1;
        const auto marker = [&](std::string_view m) {
            return l.substr(0, 3) == m && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
        };
        if (marker("---")) {
            if (content || ended) {
                return line;
            }
            content = true; // an explicit start of the first document
            continue;
        }
        if (marker("...")) {
            ended = true;
            continue;
        }
        const auto first = l.find_first_not_of(" \t\r");
        if (first == std::string_view::npos || l[first] == '#' || l[first] == '%') {
            continue;
        }
        if (ended) {
            return line;
        }
        content = true;
    }
    return -1;
}

} // namespace

YAML::Node load_yaml_string(const std::string& text, const std::string& name)
{
    if (text.size() > max_config_bytes) {
        throw config_error(name + ": " + std::to_string(text.size()) + " bytes; a config is at most " +
                           std::to_string(max_config_bytes >> 20) + " MiB (is it the right file?)");
    }
    if (const auto nul = text.find('\0'); nul != std::string::npos) {
        // yaml-cpp would cut a string at the NUL and go on: a silent truncation.
        YAML::Mark at;
        at.line = static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
        const auto line_start = text.rfind('\n', nul);
        at.column = static_cast<int>(line_start == std::string::npos ? nul : nul - line_start - 1);
        throw config_error(position(name, at) + ": a NUL byte; a config is text");
    }
    if (const int line = second_document_line(text); line >= 0) {
        YAML::Mark at;
        at.line = line;
        at.column = 0;
        throw config_error(position(name, at) + ": a second YAML document; a config file holds one");
    }
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

std::string read_config_text(const std::string& path)
{
    std::string text;
    switch (common::read_bounded(path, max_config_bytes, text)) {
    case common::read_status::cannot_open:
        throw config_error(path + ": cannot open file");
    case common::read_status::too_large:
        throw config_error(path + ": larger than " + std::to_string(max_config_bytes >> 20) +
                           " MiB; a config is at most that (is it the right file?)");
    case common::read_status::ok:
        break;
    }
    return text;
}

YAML::Node load_yaml_file(const std::string& path)
{
    return load_yaml_string(read_config_text(path), path);
}

} // namespace laps::config
