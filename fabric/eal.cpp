#include "fabric/eal.hpp"
#include "fabric/huge_pages.hpp"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <stdexcept>
#include <sched.h>
#include <unistd.h>
#include <vector>

namespace laps::fabric {

namespace {
bool started = false;
}

void start_eal(const std::string& program, std::uint32_t memory_mb, bool quiet)
{
    const std::string prefix = "--file-prefix=laps-testbed-" + std::to_string(getpid());
    // Lcore 0 on the first CPU this process may run on: `taskset -c N
    // laps-testbed` runs on N (EAL would otherwise move the thread to CPU 0).
    unsigned cpu = 0;
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
        while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) {
            ++cpu;
        }
        cpu = cpu < CPU_SETSIZE ? cpu : 0;
    }
    std::vector<std::string> args = {program, "--no-huge", "--no-shconf", "--no-pci", "-m", std::to_string(memory_mb),
                                     "--lcores=0@" + std::to_string(cpu), prefix, "--no-telemetry"};
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

namespace {

[[noreturn]] void pool_failed(const std::string& name, std::uint32_t count, std::uint16_t data_room, const char* what)
{
    throw std::runtime_error("cannot create mbuf pool '" + name + "' of " + std::to_string(count) + " mbufs (" +
                             std::to_string(count * mbuf_footprint(data_room) >> 20) + " MB): " + what +
                             "; lower the scale or cap the pools with fabric.memory_mb");
}

// Pool memory is the testbed's own mapping (fabric/huge_pages.hpp), not
// EAL memory: the EAL without hugepages maps 4 KB pages, and on a fabric of
// a thousand hosts nearly every mbuf a packet touches would be a TLB miss. No
// device reads these mbufs, so they need no IOVA. `length`, the chunk's
// mapped size, is carried as the callback's argument.
void free_chunk(rte_mempool_memhdr* chunk, void* length)
{
    unmap_huge(chunk->addr, reinterpret_cast<std::size_t>(length));
}

// One more chunk of memory for up to pool_chunk mbufs, each initialised as
// rte_pktmbuf_pool_create would. Returns false when memory is short.
bool add_chunk(rte_mempool* pool)
{
    const std::uint32_t before = pool->populated_size;
    const std::uint32_t objects = std::min(pool_chunk, pool->size - before);
    const std::size_t object_bytes = pool->header_size + pool->elt_size + pool->trailer_size;
    // rte_mempool_populate_iova aligns the first object to a cache line.
    const std::size_t bytes = objects * object_bytes + RTE_CACHE_LINE_SIZE;
    const std::size_t mapped = huge_page_round(bytes);
    void* memory = map_huge(mapped);
    if (memory == nullptr) {
        return false;
    }
    if (rte_mempool_populate_iova(pool, static_cast<char*>(memory), RTE_BAD_IOVA, bytes, free_chunk,
                                  reinterpret_cast<void*>(mapped)) <= 0) {
        unmap_huge(memory, mapped);
        return false;
    }
    // The new objects are the last of the pool's list; no lcore takes one
    // before this returns (one thread).
    std::uint32_t index = 0;
    rte_mempool_objhdr* h = nullptr;
    STAILQ_FOREACH(h, &pool->elt_list, next)
    {
        if (index >= before) {
            rte_pktmbuf_init(pool, nullptr, h + 1, index);
        }
        ++index;
    }
    return true;
}

} // namespace

mempool_ptr make_mbuf_pool(const std::string& name, std::uint32_t count, std::uint16_t data_room)
{
    // A per-lcore cache makes get/put cheap; free_mbufs() counts cached mbufs
    // as free, so leak checks stay exact. No device reads these mbufs: they
    // need no IOVA-contiguous objects, so objects may cross 4 KB pages
    // (without hugepages DPDK would otherwise keep each in one page, and a
    // 2 KB mbuf would take a page of its own).
    mempool_ptr p(rte_mempool_create_empty(name.c_str(), count, sizeof(rte_mbuf) + data_room, 256,
                                           sizeof(rte_pktmbuf_pool_private), SOCKET_ID_ANY,
                                           RTE_MEMPOOL_F_NO_IOVA_CONTIG));
    if (!p) {
        pool_failed(name, count, data_room, rte_strerror(rte_errno));
    }
    // A ring for one producer and one consumer: a run is one thread, and
    // free_mbufs() reads the ring's count.
    if (rte_mempool_set_ops_byname(p.get(), "ring_sp_sc", nullptr) != 0) {
        pool_failed(name, count, data_room, "no ring_sp_sc mempool ops");
    }
    rte_pktmbuf_pool_private priv{};
    priv.mbuf_data_room_size = data_room;
    rte_pktmbuf_pool_init(p.get(), &priv);
    if (!add_chunk(p.get())) {
        pool_failed(name, count, data_room, "out of memory");
    }
    return p;
}

std::uint32_t free_mbufs(const rte_mempool* pool) noexcept
{
    const rte_mempool_cache* cache = rte_mempool_default_cache(const_cast<rte_mempool*>(pool), rte_lcore_id());
    return rte_ring_count(static_cast<const rte_ring*>(pool->pool_data)) + (cache != nullptr ? cache->len : 0);
}

std::uint32_t mbufs_in_use(const rte_mempool* pool) noexcept
{
    return pool->populated_size - free_mbufs(pool);
}

void grow_mbuf_pool(rte_mempool* pool, std::uint32_t keep_free)
{
    while (pool->populated_size < pool->size && free_mbufs(pool) < keep_free) {
        if (!add_chunk(pool)) {
            throw std::runtime_error(std::string("mbuf pool '") + pool->name + "': no memory for " +
                                     std::to_string(pool_chunk) + " more mbufs (" +
                                     std::to_string(pool->populated_size) + " of " + std::to_string(pool->size) +
                                     "); lower the scale or cap the pools with fabric.memory_mb");
        }
    }
}

} // namespace laps::fabric
