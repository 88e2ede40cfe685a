#pragma once
// One counter of a plain struct of std::uint64_t fields: the name and help
// text that the console, telemetry, stats and the testbed print, and the
// field itself. The engine (pipeline/counters.hpp) and the app's workers
// (app/run/counters.hpp) list their counters with it, each from one X-macro.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace laps::common {

template <typename Counters>
struct counter_info {
    std::string_view name;
    std::string_view help;
    std::uint64_t Counters::*field;
};

// The position of the counter named `name` in a counter list (the index of
// its published copy); list.size() when there is none.
template <typename List>
constexpr std::size_t counter_index(const List& list, std::string_view name) noexcept
{
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].name == name) {
            return i;
        }
    }
    return list.size();
}

} // namespace laps::common
