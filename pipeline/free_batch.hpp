#pragma once
// Mbufs freed together: rte_pktmbuf_free_bulk returns runs of mbufs of one
// mempool to its per-lcore cache in one call, where rte_pktmbuf_free pays the
// cache lookup and the put for every mbuf. The bulk free flushes whenever the
// pool changes from one mbuf to the next, so each batch should hold mbufs of
// one kind (the ACKs a burst brought, or the host frames they released):
// mixed, it costs more than single frees (docs/PERFORMANCE.md §7).
// Owned by one thread; flushes when full and when it goes out of scope.

#include <rte_mbuf.h>

#include <array>
#include <cstdint>

namespace laps::pipeline {

class free_batch {
public:
    free_batch() = default;
    free_batch(const free_batch&) = delete;
    free_batch& operator=(const free_batch&) = delete;
    ~free_batch() { flush(); }

    void add(rte_mbuf* m) noexcept
    {
        if (_count == _mbufs.size()) {
            flush();
        }
        _mbufs[_count++] = m;
    }

    void flush() noexcept
    {
        if (_count != 0) {
            rte_pktmbuf_free_bulk(_mbufs.data(), _count);
            _count = 0;
        }
    }

private:
    // The count first: a batch of a few mbufs then reads and writes one line.
    unsigned _count = 0;
    std::array<rte_mbuf*, 64> _mbufs; // only the first _count are set
};

} // namespace laps::pipeline
