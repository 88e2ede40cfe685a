#pragma once
// Duplicate detection at the receiver (§II-F: "duplicated packets are ACKed
// and dropped").
//
// Tracks, per flow, the lowest sequence number not yet received (`base`) and
// a bitmap of what arrived in [base, base + window). The sender never has
// more than its window in flight, and base never passes an unreceived
// packet, so with the same window size nothing legitimate falls beyond it.

#include <cstdint>
#include <memory_resource>
#include <vector>

namespace laps::retransmit {

enum class receive_verdict : std::uint8_t {
    fresh,        // first copy: deliver
    duplicate,    // seen before (a spurious resend): ACK and drop
    beyond_window // too far ahead: the sender broke its window; drop, count
};

class dup_filter {
public:
    // `memory`: where the bitmap lives (the worker's socket, in the app).
    explicit dup_filter(std::uint32_t window, std::pmr::memory_resource* memory = std::pmr::get_default_resource());

    receive_verdict on_receive(std::uint32_t seq) noexcept;

    // Forget everything; `start` is the lowest sequence number not received.
    void reset(std::uint32_t start = 0) noexcept
    {
        for (auto& w : _bits) {
            w = 0;
        }
        _base = start;
    }

    // Treats everything before `start` as received (the sender will never
    // send it again), if `start` is ahead of the base. Returns whether the
    // base moved.
    bool advance_to(std::uint32_t start) noexcept
    {
        if (static_cast<std::int32_t>(start - _base) <= 0) [[likely]] {
            return false;
        }
        slide_to(start);
        return true;
    }

    std::uint32_t base() const noexcept { return _base; }
    std::uint32_t window() const noexcept { return _window; }

private:
    void slide_to(std::uint32_t start) noexcept;
    bool test(std::uint32_t seq) const noexcept { return (_bits[(seq & _mask) >> 6] >> (seq & 63)) & 1u; }
    void set(std::uint32_t seq) noexcept { _bits[(seq & _mask) >> 6] |= std::uint64_t{1} << (seq & 63); }
    void clear(std::uint32_t seq) noexcept { _bits[(seq & _mask) >> 6] &= ~(std::uint64_t{1} << (seq & 63)); }

    std::pmr::vector<std::uint64_t> _bits;
    std::uint32_t _window;
    std::uint32_t _mask;
    std::uint32_t _base = 0;
};

} // namespace laps::retransmit
