// The LAPS parser on any bytes (docs/wire-format.md): every input gives a
// result or a named error, never a read outside the span.
#include "wire/parse.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::span<const std::uint8_t> packet(data, size);
    const auto r = laps::wire::parse(packet, laps::wire::default_udp_port, 4096);
    if (r.error == laps::wire::parse_error::ok && r.packet.header.type == laps::wire::packet_type::data) {
        // The inner frame must lie inside what was parsed.
        const auto inner = r.packet.inner(packet);
        if (inner.data() < data || inner.data() + inner.size() > data + size) {
            __builtin_trap();
        }
    }
    // Half the input as the contiguous head of a longer frame.
    (void)laps::wire::parse_head(packet.first(size / 2), size, laps::wire::default_udp_port, 4096);
    return 0;
}
