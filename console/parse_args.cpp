#include "console/parse_args.hpp"
#include "console/backend.hpp"

#include <charconv>
#include <cmath>
#include <algorithm>
#include <sstream>

namespace laps::console {

namespace {

std::int64_t parse_integer(std::string_view text, std::string_view what, std::int64_t min, std::int64_t max)
{
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) {
        throw console_error(std::string(what) + ": '" + std::string(text) + "' is not an integer");
    }
    if (v < min || v > max) {
        throw console_error(std::string(what) + ": " + std::to_string(v) + " is out of range [" +
                            std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    return v;
}

std::vector<std::string_view> split(std::string_view text, char sep)
{
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto end = text.find(sep, start);
        const auto stop = end == std::string_view::npos ? text.size() : end;
        parts.push_back(text.substr(start, stop - start));
        if (end == std::string_view::npos) {
            break;
        }
        start = end + 1;
    }
    return parts;
}

} // namespace

double parse_number(std::string_view text, std::string_view what, double min, double max)
{
    const std::string s(text);
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != s.size() || s.empty() || !std::isfinite(v)) {
        throw console_error(std::string(what) + ": '" + s + "' is not a number");
    }
    if (v < min || v > max) {
        std::ostringstream range;
        range << "[" << min << ", " << max << "]";
        throw console_error(std::string(what) + ": " + s + " is out of range " + range.str());
    }
    return v;
}

std::vector<tables::path_id> parse_pid_list(std::string_view text)
{
    std::vector<tables::path_id> pids;
    for (const auto part : split(text, ',')) {
        const auto pid = static_cast<tables::path_id>(parse_integer(part, "pid", 0, 65535));
        for (const auto p : pids) {
            if (p == pid) {
                throw console_error("pids: " + std::to_string(pid) + " is listed twice");
            }
        }
        pids.push_back(pid);
    }
    if (pids.size() > tables::max_paths_per_destination) {
        throw console_error("pids: " + std::to_string(pids.size()) + " given, at most " +
                            std::to_string(tables::max_paths_per_destination));
    }
    return pids;
}

tables::pit_row parse_pit_row(tables::path_id pid, std::string_view rest)
{
    tables::pit_row row;
    row.pid = pid;
    bool has_base = false;
    std::istringstream words{std::string(rest)};
    std::string word;
    std::vector<std::string> seen;
    while (words >> word) {
        const auto eq = word.find('=');
        if (eq == std::string::npos) {
            throw console_error("pit add: '" + word + "' is not key=value");
        }
        const std::string_view key(word.data(), eq);
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
            throw console_error("pit add: " + std::string(key) + " given twice");
        }
        seen.emplace_back(key);
        const std::string_view value(word.data() + eq + 1, word.size() - eq - 1);
        if (key == "base_ns") {
            row.base_ns = parse_integer(value, "base_ns", 1, std::int64_t{1} << 47);
            has_base = true;
        } else if (key == "uncongested_ns") {
            row.uncongested_ns = parse_integer(value, "uncongested_ns", 1, std::int64_t{1} << 47);
        } else if (key == "hops") {
            row.hop_count = static_cast<std::uint8_t>(parse_integer(value, "hops", 0, 255));
        } else if (key == "valid") {
            if (value != "true" && value != "false") {
                throw console_error("valid: expected true or false, got '" + std::string(value) + "'");
            }
            row.valid = value == "true";
        } else if (key == "anchors") {
            const auto parts = value.empty() ? std::vector<std::string_view>{} : split(value, ',');
            if (parts.size() > tables::max_anchors) {
                throw console_error("anchors: " + std::to_string(parts.size()) + " given, at most " +
                                    std::to_string(tables::max_anchors));
            }
            for (std::size_t i = 0; i < parts.size(); ++i) {
                row.anchors[i] = static_cast<std::uint32_t>(parse_integer(parts[i], "anchor", 0, 0xffffffffLL));
            }
            row.anchor_count = static_cast<std::uint8_t>(parts.size());
        } else {
            throw console_error("pit add: unknown key '" + std::string(key) +
                                "' (known: base_ns, uncongested_ns, anchors, hops, valid)");
        }
    }
    if (!has_base) {
        throw console_error("pit add: base_ns=<ns> is required");
    }
    if (row.uncongested_ns > row.base_ns) {
        throw console_error("pit add: uncongested_ns must not exceed base_ns");
    }
    return row;
}

} // namespace laps::console
