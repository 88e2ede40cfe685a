#pragma once
// A node of the emulated fabric: a switch, or a host (hosts forward too: a
// rail GPU relays traffic between its NVLink and rail ports, PXN). A switch
// shares one buffer among its output ports (paper §IV-A: 32 MB); a host's
// ports are NIC queues without a shared limit.

#include "fabric/link.hpp"

#include <cstdint>
#include <vector>

namespace laps::fabric {

struct node_state {
    bool is_host = false;
    std::vector<port_id> ports;        // output ports, by neighbour id
    std::uint64_t shared_limit = 0;    // 0: none
    std::uint64_t buffered = 0;        // bytes held by all its ports
    std::uint64_t max_buffered = 0;
    std::uint32_t ecmp_salt = 0;       // per-switch hash salt: no polarisation
    std::uint64_t fcs_errors = 0;      // frames its ports received corrupted
    // A host: its RoCE NIC's DATA queued on its ports, not yet on the wire
    // (the NIC's TX scheduler pulls from its QPs while there is room).
    std::uint32_t nic_queued = 0;

    bool admits(std::uint32_t bytes) const noexcept { return shared_limit == 0 || buffered + bytes <= shared_limit; }
};

} // namespace laps::fabric
