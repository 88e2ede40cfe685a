#pragma once
// The testbed's DPDK environment: one EAL per process with no hugepages, no
// shared config and no PCI (it runs on any machine, as any user), and the
// mbuf pools of a run, each with one owner.

#include <rte_mempool.h>

#include <cstdint>
#include <memory>
#include <string>

namespace laps::fabric {

// Starts the EAL with `memory_mb` of (non-huge) memory. Throws
// std::runtime_error when rte_eal_init fails. Once per process.
void start_eal(const std::string& program, std::uint32_t memory_mb, bool quiet = true);
// rte_eal_cleanup(), if started.
void stop_eal() noexcept;

struct mempool_deleter {
    void operator()(rte_mempool* p) const noexcept { rte_mempool_free(p); }
};
using mempool_ptr = std::unique_ptr<rte_mempool, mempool_deleter>;

// An mbuf pool of `count` mbufs with `data_room` bytes each. Throws
// std::runtime_error naming the pool (and how much memory it needed).
mempool_ptr make_mbuf_pool(const std::string& name, std::uint32_t count, std::uint16_t data_room);

// Bytes one mbuf of `data_room` takes in EAL memory, with the mempool's
// object header and padding, generously (for sizing -m).
constexpr std::uint64_t mbuf_footprint(std::uint32_t data_room) noexcept
{
    return 128 + data_room + 192;
}

} // namespace laps::fabric
