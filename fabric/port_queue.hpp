#pragma once
// An output-port queue: two FIFOs served in strict priority (ACKs and probe
// answers, DSCP 46, before everything else, paper §III-E reason iii), each
// with a DropTail limit in bytes. The packet being serialised stays counted
// until it has left, as on a switch whose buffer cell is freed after TX.

#include "fabric/packet.hpp"

#include <algorithm>
#include <cstdint>

namespace laps::fabric {

class port_queue {
public:
    // limit_bytes 0: no limit (a host NIC: the TX ring backpressures the
    // sender rather than dropping).
    explicit port_queue(std::uint64_t limit_bytes = 0) noexcept : _limit(limit_bytes) {}

    std::uint64_t limit() const noexcept { return _limit; }

    // Whether a packet of `bytes` fits in its class under `limit` (0: none),
    // given `in_service` bytes of that class still on their way out.
    bool fits(bool priority, std::uint32_t bytes, std::uint64_t in_service, std::uint64_t limit) const noexcept
    {
        if (limit == 0) {
            return true;
        }
        const packet_fifo& q = priority ? _high : _low;
        return q.bytes + in_service + bytes <= limit;
    }
    bool fits(bool priority, std::uint32_t bytes, std::uint64_t in_service) const noexcept
    {
        return fits(priority, bytes, in_service, _limit);
    }

    void push(packet_pool& pool, std::uint32_t i) noexcept
    {
        (pool[i].priority ? _high : _low).push(pool, i);
    }

    bool empty() const noexcept { return _high.empty() && _low.empty(); }

    std::uint32_t pop(packet_pool& pool) noexcept { return _high.empty() ? _low.pop(pool) : _high.pop(pool); }
    // A port paused by PFC still sends the priority class (ACKs are not paused).
    bool has_high() const noexcept { return !_high.empty(); }
    std::uint32_t pop_high(packet_pool& pool) noexcept { return _high.pop(pool); }

    // The packet pop() would take next (no_packet when empty; pop_high()'s
    // when only the priority class may go): the event loop prefetches it.
    std::uint32_t next_out(bool high_only) const noexcept
    {
        return high_only || !_high.empty() ? _high.head : _low.head;
    }

    // Queued bytes, the low (data) class and all.
    std::uint64_t low_bytes() const noexcept { return _low.bytes; }
    std::uint64_t high_bytes() const noexcept { return _high.bytes; }
    std::uint64_t bytes() const noexcept { return _low.bytes + _high.bytes; }
    std::uint32_t packets() const noexcept { return _low.count + _high.count; }
    std::uint32_t low_packets() const noexcept { return _low.count; }

    // Removes every packet, calling `drop(index)` on each (link down).
    template <typename F>
    void flush(packet_pool& pool, F&& drop)
    {
        while (!empty()) {
            drop(pop(pool));
        }
    }

private:
    std::uint64_t _limit;
    packet_fifo _high;
    packet_fifo _low;
};

} // namespace laps::fabric
