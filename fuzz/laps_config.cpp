// The laps config reader (yaml-cpp) on any text: a config or a
// config::config_error naming where, nothing else.
#include "config/laps_config.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        (void)laps::config::load_laps_config_string(text, "<fuzz>");
    } catch (const laps::config::config_error&) {
    }
    return 0;
}
