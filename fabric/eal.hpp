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

// An mbuf pool of up to `count` mbufs with `data_room` bytes each that
// takes memory as it is used: it starts with pool_chunk mbufs (or `count`)
// and grow_mbuf_pool() adds chunks. A pool populated at once touches every
// page of every mbuf (rte_pktmbuf_init), so a run would pay its worst case
// in resident memory from the start (docs/testbed.md, "Memory and scale").
// Throws std::runtime_error naming the pool (and how much memory it needed).
mempool_ptr make_mbuf_pool(const std::string& name, std::uint32_t count, std::uint16_t data_room);

// Mbufs a pool gets at a time.
inline constexpr std::uint32_t pool_chunk = 32768;

// Mbufs free in `pool` for this lcore: its ring and this lcore's cache (the
// testbed's pools have one user, the thread on lcore 0).
std::uint32_t free_mbufs(const rte_mempool* pool) noexcept;

// Mbufs handed out and not returned: populated minus free.
std::uint32_t mbufs_in_use(const rte_mempool* pool) noexcept;

// Adds chunks to `pool` until at least `keep_free` mbufs are free or it
// holds all it may. Throws std::runtime_error when memory runs out.
void grow_mbuf_pool(rte_mempool* pool, std::uint32_t keep_free);

// Bytes one mbuf of `data_room` takes in memory, with the mempool's
// object header and padding, generously (for sizing -m).
constexpr std::uint64_t mbuf_footprint(std::uint32_t data_room) noexcept
{
    return 128 + data_room + 192;
}

} // namespace laps::fabric
