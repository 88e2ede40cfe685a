#include "tables/address.hpp"

#include <arpa/inet.h>

namespace laps::tables {

std::optional<address> address::parse(std::string_view text)
{
    const std::string s(text);
    std::uint8_t buf[16];
    if (inet_pton(AF_INET, s.c_str(), buf) == 1) {
        return ipv4_wire(buf);
    }
    if (inet_pton(AF_INET6, s.c_str(), buf) == 1) {
        return ipv6_wire(buf);
    }
    return std::nullopt;
}

std::string address::to_string() const
{
    char buf[INET6_ADDRSTRLEN];
    if (is_ipv4()) {
        inet_ntop(AF_INET, &bytes[12], buf, sizeof buf);
    } else {
        inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf);
    }
    return buf;
}

} // namespace laps::tables
