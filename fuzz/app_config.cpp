// The app config reader on any text: an app_config or a config_error.
#include "app/config/config.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        (void)laps::app::parse_app_config(text, "<fuzz>");
    } catch (const laps::config::config_error&) {
    }
    return 0;
}
