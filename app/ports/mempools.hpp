#pragma once
// Mempools with one owner. A pool is freed when its owner goes, after the
// ports and engines that use it (declaration order in instance/link).

#include "app/errors.hpp"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <memory>
#include <string>

namespace laps::app {

struct mempool_deleter {
    void operator()(rte_mempool* p) const noexcept { rte_mempool_free(p); }
};
using mempool_ptr = std::unique_ptr<rte_mempool, mempool_deleter>;

// Throws startup_error naming the pool, its size and the usual fix.
inline mempool_ptr make_pktmbuf_pool(const std::string& name, const std::string& what, std::uint32_t mbufs,
                                     std::uint32_t cache, std::uint16_t data_room, int socket)
{
    // The cache may hold at most n / 1.5 objects (rte_mempool_create's rule).
    const std::uint32_t usable_cache = std::min<std::uint32_t>(cache, mbufs * 2 / 3 / 2);
    rte_mempool* p = rte_pktmbuf_pool_create(name.c_str(), mbufs, usable_cache, 0, data_room, socket);
    if (p == nullptr) {
        const double mb = static_cast<double>(mbufs) * (data_room + sizeof(rte_mbuf) + 64) / (1 << 20);
        throw startup_error("cannot create mempool '" + name + "' (" + what + ": " + std::to_string(mbufs) +
                            " mbufs of " + std::to_string(data_room) + " bytes, about " +
                            std::to_string(static_cast<long>(mb + 1)) + " MB): " + rte_strerror(rte_errno) +
                            "; give EAL more memory (-m) or lower mempool sizes in the config");
    }
    return mempool_ptr(p);
}

} // namespace laps::app
