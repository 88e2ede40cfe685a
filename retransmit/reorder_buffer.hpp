#pragma once
// In-order delivery at the receiver: a bounded per-flow reorder buffer
// (paper §IV-B, Fig. 20, measures how full it gets).
//
// Why not rte_reorder: in DPDK 22.11 a buffer takes its window start from the
// first packet inserted (rte_reorder_min_seqn_set arrived in 23.x), so with
// spraying, a flow whose seq 0 arrives second would have seq 0 refused as
// "too late". Here the window starts at 0 and only moves over delivered data.
//
// The caller removes duplicates first (dup_filter); a packet at most
// `window` - 1 ahead of the next one to deliver always fits, and the
// sender's window guarantees no packet is further ahead.

#include <bit>
#include <cstdint>
#include <memory_resource>
#include <vector>

namespace laps::retransmit {

class reorder_buffer {
public:
    // `memory`: where the slots live (the worker's socket, in the app).
    explicit reorder_buffer(std::uint32_t window,
                            std::pmr::memory_resource* memory = std::pmr::get_default_resource())
        : _slots(std::bit_ceil(window < 2 ? 2u : window), 0, memory), _mask(static_cast<std::uint32_t>(_slots.size()) - 1)
    {
    }

    // Accepts `handle` (non-zero) with sequence `seq`. Returns false when
    // `seq` is behind the next one to deliver, too far ahead, or already held.
    bool insert(std::uint32_t seq, std::uint64_t handle) noexcept
    {
        const std::uint32_t ahead = seq - _next;
        if (ahead > _mask || _slots[seq & _mask] != 0) {
            return false;
        }
        _slots[seq & _mask] = handle;
        ++_held;
        return true;
    }

    // Hands every handle that is now in order to `deliver`, in order.
    template <typename F>
    std::uint32_t release(F&& deliver) noexcept
    {
        std::uint32_t n = 0;
        while (_slots[_next & _mask] != 0) {
            const std::uint64_t h = _slots[_next & _mask];
            _slots[_next & _mask] = 0;
            ++_next;
            --_held;
            ++n;
            deliver(h);
        }
        return n;
    }

    // Gives up on the gaps: hands every held handle to `deliver` in
    // sequence order and moves the window past the last of them, so that
    // what arrives of the gaps later is behind() it.
    template <typename F>
    std::uint32_t skip_gaps(F&& deliver) noexcept
    {
        return hand_over_before(_next + _mask + 1, deliver);
    }
    // Gives up on the gaps before `start` (the sender will never send them
    // again): hands what is held before it to `deliver`, in order, and
    // makes `start` the next one to deliver, if it is ahead.
    template <typename F>
    std::uint32_t skip_to(std::uint32_t start, F&& deliver) noexcept
    {
        const std::uint32_t n = hand_over_before(start, deliver);
        if (static_cast<std::int32_t>(start - _next) > 0) {
            _next = start; // nothing held is before it any more
        }
        return n;
    }
    // Whether `seq` is before the next one to deliver (delivered, or given up on).
    bool behind(std::uint32_t seq) const noexcept { return static_cast<std::int32_t>(seq - _next) < 0; }
    // Everything still held, for teardown.
    template <typename F>
    void drain(F&& release_handle) noexcept
    {
        for (auto& s : _slots) {
            if (s != 0) {
                release_handle(s);
                s = 0;
            }
        }
        _held = 0;
    }

    // Forget everything (a recycled flow slot); handles must have been
    // drained. `start` is the next sequence number to deliver.
    void reset(std::uint32_t start = 0) noexcept
    {
        // A slot is non-zero only while it counts in _held: with nothing
        // held (a drained flow) every slot is 0 already, and a new flow
        // writes none of them.
        if (_held != 0) {
            for (auto& s : _slots) {
                s = 0;
            }
        }
        _next = start;
        _held = 0;
    }

    std::uint32_t held() const noexcept { return _held; }
    std::uint32_t next_expected() const noexcept { return _next; }
    std::uint32_t window() const noexcept { return _mask + 1; }

private:
    // Moves the window up to `limit` at most, handing what it passes to
    // `deliver`; stops early once nothing is held.
    template <typename F>
    std::uint32_t hand_over_before(std::uint32_t limit, F& deliver) noexcept
    {
        std::uint32_t n = 0;
        for (; _held > 0 && static_cast<std::int32_t>(limit - _next) > 0; ++_next) {
            std::uint64_t& slot = _slots[_next & _mask];
            if (slot != 0) {
                const std::uint64_t h = slot;
                slot = 0;
                --_held;
                ++n;
                deliver(h);
            }
        }
        return n;
    }

    std::pmr::vector<std::uint64_t> _slots; // 0: empty
    std::uint32_t _mask;
    std::uint32_t _next = 0;
    std::uint32_t _held = 0;
};

} // namespace laps::retransmit
