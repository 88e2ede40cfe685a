#include "fabric/eal.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include <stdexcept>
#include <unistd.h>
#include <vector>

namespace laps::fabric {

namespace {
bool started = false;
}

void start_eal(const std::string& program, std::uint32_t memory_mb, bool quiet)
{
    const std::string prefix = "--file-prefix=laps-testbed-" + std::to_string(getpid());
    std::vector<std::string> args = {program, "--no-huge", "--no-shconf", "--no-pci", "-m", std::to_string(memory_mb),
                                     "-l", "0", prefix, "--no-telemetry"};
    if (quiet) {
        args.emplace_back("--log-level=lib.eal:error");
        args.emplace_back("--log-level=lib.mbuf:error");
        args.emplace_back("--log-level=lib.mempool:error");
    }
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) {
        throw std::runtime_error(std::string("rte_eal_init failed: ") + rte_strerror(rte_errno));
    }
    started = true;
}

void stop_eal() noexcept
{
    if (started) {
        rte_eal_cleanup();
        started = false;
    }
}

mempool_ptr make_mbuf_pool(const std::string& name, std::uint32_t count, std::uint16_t data_room)
{
    // A per-lcore cache makes get/put cheap; rte_mempool_in_use_count counts
    // cached mbufs as free, so leak checks stay exact.
    rte_mempool* p = rte_pktmbuf_pool_create(name.c_str(), count, 256, 0, data_room, SOCKET_ID_ANY);
    if (p == nullptr) {
        throw std::runtime_error("cannot create mbuf pool '" + name + "' of " + std::to_string(count) +
                                 " mbufs (" + std::to_string(count * mbuf_footprint(data_room) >> 20) +
                                 " MB): " + rte_strerror(rte_errno) + "; raise fabric.memory_mb or lower the scale");
    }
    return mempool_ptr(p);
}

} // namespace laps::fabric
