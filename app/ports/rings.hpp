#pragma once
// rte_rings with one owner. A ring that carries mbufs is emptied (and the
// mbufs freed) when its owner goes, so nothing stays out of its pool.

#include "app/errors.hpp"

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <memory>
#include <string>

namespace laps::app {

struct mbuf_ring_deleter {
    void operator()(rte_ring* r) const noexcept
    {
        void* objs[64];
        unsigned n;
        while ((n = rte_ring_dequeue_burst(r, objs, 64, nullptr)) > 0) {
            rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(objs), n);
        }
        rte_ring_free(r);
    }
};
using mbuf_ring_ptr = std::unique_ptr<rte_ring, mbuf_ring_deleter>;

// Single producer, single consumer: one lcore on each side.
inline mbuf_ring_ptr make_mbuf_ring(const std::string& name, std::uint32_t size, int socket)
{
    rte_ring* r = rte_ring_create(name.c_str(), size, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (r == nullptr) {
        throw startup_error("cannot create ring '" + name + "' of " + std::to_string(size) +
                            " entries: " + rte_strerror(rte_errno));
    }
    return mbuf_ring_ptr(r);
}

} // namespace laps::app
