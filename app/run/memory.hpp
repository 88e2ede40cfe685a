#pragma once
// Where an engine's state lives: in memory near the worker that runs it
// (docs/app.md "Memory").
//
// With hugepages, the engines' flow slots, windows, timers and staging, and
// the instance's shared tables, come from rte_malloc_socket on the socket of
// the lcore that uses them: hugepage-backed (few TLB misses over tables of
// tens of MB) and local. With --no-huge, EAL's memory is the -m budget, which
// the mempools need; the engines then use the process heap, and since each
// engine is built on its own worker lcore (instance.cpp), the kernel's
// first-touch policy still places its pages on that lcore's node.
//
// Either way the resource counts what it holds, for the start-up log line.

#include <rte_malloc.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <memory_resource>
#include <new>
#include <string>

namespace laps::app {

class engine_memory final : public std::pmr::memory_resource {
public:
    // socket < 0 or !hugepages: the process heap.
    engine_memory(bool hugepages, int socket) : _hugepages(hugepages), _socket(socket) {}

    bool hugepages() const noexcept { return _hugepages; }
    int socket() const noexcept { return _socket; }
    std::size_t bytes() const noexcept { return _bytes.load(std::memory_order_relaxed); }

private:
    void* do_allocate(std::size_t bytes, std::size_t alignment) override
    {
        void* p = nullptr;
        if (_hugepages) {
            // rte_malloc aligns to at least a cache line; a power of two above it is honoured.
            p = rte_malloc_socket("laps_engine", bytes, static_cast<unsigned>(std::max<std::size_t>(alignment, 64)),
                                  _socket);
            if (p == nullptr) {
                throw std::bad_alloc();
            }
        } else {
            p = std::pmr::new_delete_resource()->allocate(bytes, alignment);
        }
        _bytes.fetch_add(bytes, std::memory_order_relaxed);
        return p;
    }

    void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override
    {
        _bytes.fetch_sub(bytes, std::memory_order_relaxed);
        if (_hugepages) {
            rte_free(p);
        } else {
            std::pmr::new_delete_resource()->deallocate(p, bytes, alignment);
        }
    }

    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

    bool _hugepages;
    int _socket;
    std::atomic<std::size_t> _bytes{0};
};

// "12.3 MB"
inline std::string format_megabytes(std::size_t bytes)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return buf;
}

} // namespace laps::app
