#pragma once
// A name table for an enum: the one place that spells each value's name for
// config files, console commands, command-line flags and reports. Parsing and
// printing both read the table, so a new value is one row, and an error can
// list every accepted name (config::reader::choice_of, the testbed's flags).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace laps::common {

template <typename Enum>
struct named {
    std::string_view name;
    Enum value;
};

// The value called `name` in `table` (any range of named<Enum>), if any.
template <typename Table>
constexpr auto find_named(const Table& table, std::string_view name) noexcept
    -> std::optional<decltype(std::begin(table)->value)>
{
    for (const auto& row : table) {
        if (row.name == name) {
            return row.value;
        }
    }
    return std::nullopt;
}

// The name of `value` in `table`; `fallback` when the table lacks it.
template <typename Table, typename Enum>
constexpr std::string_view name_of(const Table& table, Enum value, std::string_view fallback = "unknown") noexcept
{
    for (const auto& row : table) {
        if (row.value == value) {
            return row.name;
        }
    }
    return fallback;
}

// "a, b, c": every name of `table`, for help text and error messages.
template <typename Table>
std::string joined_names(const Table& table, std::string_view separator = ", ")
{
    std::string out;
    for (const auto& row : table) {
        if (!out.empty()) {
            out += separator;
        }
        out += row.name;
    }
    return out;
}

} // namespace laps::common
