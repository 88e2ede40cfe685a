#pragma once
// The schemes' parameter sections (scenario `roce.<key>`, docs/testbed.md):
// each registry row that has one names its key and reads it into its own
// type; a section the scenario leaves out reads as that type's defaults.

#include "config/reader.hpp"

#include <any>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace laps::fabric::schemes {

class parameters {
public:
    void set(std::string_view key, std::any value);

    // Section `key` as type P (its defaults when the scenario has none).
    template <typename P>
    const P& get(std::string_view key) const
    {
        for (const auto& [k, v] : _sections) {
            if (k == key) {
                const P* p = std::any_cast<P>(&v);
                if (p == nullptr) {
                    throw std::logic_error("roce." + std::string(key) + " read as another type than it was parsed");
                }
                return *p;
            }
        }
        static const P defaults{};
        return defaults;
    }

private:
    std::vector<std::pair<std::string_view, std::any>> _sections;
};

// The section keys of every scheme that has one, in registry order.
std::vector<std::string_view> parameter_keys();
// Reads every section present in `roce` (the scenario's `roce:` map) into `out`.
void parse_parameters(const config::reader& r, const YAML::Node& roce, parameters& out);

} // namespace laps::fabric::schemes
