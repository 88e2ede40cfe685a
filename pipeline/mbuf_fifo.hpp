#pragma once
// A fixed-capacity FIFO of mbuf pointers owned by one thread: the engine's
// outputs between drains, and each flow's queue of host frames. Storage is
// given at construction (no allocation afterwards), a power of two of slots
// so that positions wrap with a mask, not a division (docs/PERFORMANCE.md §7);
// the capacity may be smaller (a configured queue length).

#include <rte_mbuf.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>

namespace laps::pipeline {

class mbuf_fifo {
public:
    mbuf_fifo() = default;
    // `storage.size()`: a power of two, at least `capacity`.
    mbuf_fifo(std::span<rte_mbuf*> storage, std::uint32_t capacity) noexcept
        : _slots(storage.data()), _mask(static_cast<std::uint32_t>(storage.size()) - 1), _capacity(capacity)
    {
    }
    // Slots for a FIFO of `capacity`.
    static constexpr std::size_t slots_for(std::uint32_t capacity) noexcept { return std::bit_ceil(std::max(capacity, 1u)); }

    bool empty() const noexcept { return _count == 0; }
    bool full() const noexcept { return _count == _capacity; }
    std::uint32_t size() const noexcept { return _count; }
    std::uint32_t room() const noexcept { return _capacity - _count; }

    bool push(rte_mbuf* m) noexcept
    {
        if (full()) {
            return false;
        }
        _slots[(_head + _count) & _mask] = m;
        ++_count;
        return true;
    }

    // Staging: a full FIFO frees `m` and counts it in `dropped`.
    void push_or_free(rte_mbuf* m, std::uint64_t& dropped) noexcept
    {
        if (!push(m)) {
            ++dropped;
            rte_pktmbuf_free(m);
        }
    }

    rte_mbuf* front() const noexcept { return _slots[_head]; }

    rte_mbuf* pop() noexcept
    {
        rte_mbuf* m = _slots[_head];
        _head = (_head + 1) & _mask;
        --_count;
        return m;
    }

    // Moves up to `max` mbufs to `out`; returns how many. At most two
    // contiguous copies (the slots before and after the wrap), not a pop per
    // mbuf: the engine's outputs leave through here three times per host
    // frame (docs/PERFORMANCE.md §7).
    std::uint16_t take(rte_mbuf** out, std::uint16_t max) noexcept
    {
        const std::uint32_t n = std::min<std::uint32_t>(max, _count);
        const std::uint32_t before_wrap = std::min(n, _mask + 1 - _head);
        std::copy_n(_slots + _head, before_wrap, out);
        std::copy_n(_slots, n - before_wrap, out + before_wrap);
        _head = (_head + n) & _mask;
        _count -= n;
        return static_cast<std::uint16_t>(n);
    }

    void free_all() noexcept
    {
        while (!empty()) {
            rte_pktmbuf_free(pop());
        }
    }

private:
    // The storage's start only: its size is _mask + 1. 24 bytes, part of a
    // flow's hot state (pipeline/flow_state.hpp).
    rte_mbuf** _slots = nullptr;
    std::uint32_t _mask = 0;
    std::uint32_t _capacity = 0;
    std::uint32_t _head = 0;
    std::uint32_t _count = 0;
};

static_assert(sizeof(mbuf_fifo) == 24);

} // namespace laps::pipeline
