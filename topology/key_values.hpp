#pragma once
// "key=value,key=value" lists, as the builder arguments ("rail:clusters=2")
// and path options ("yen:k=8,stretch=2") write them.

#include <string_view>

namespace laps::topology {

// Calls visit(item, key, value) for each comma-separated item; `key` is the
// part before the first '=', `value` the part after it (empty without '=').
template <typename Visit>
void for_each_key_value(std::string_view list, Visit&& visit)
{
    while (!list.empty()) {
        const auto comma = list.find(',');
        const std::string_view item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        const auto eq = item.find('=');
        visit(item, item.substr(0, eq), eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1));
    }
}

} // namespace laps::topology
