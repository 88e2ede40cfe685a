#pragma once
// Engine timers: pacer releases, per-path retransmit timeouts (Alg. 3),
// retries of flows that found no valid path, and the end of a receiver-paced
// flow's wait for a credit. A binary min-heap on a vector
// reserved up front; the engine keeps at most one pending entry per
// (flow, kind, path), so the heap never grows past its reservation and never
// allocates on the data path. Entries of recycled flows are recognised by
// their generation and skipped.

#include "common/time.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory_resource>
#include <queue>
#include <vector>

namespace laps::pipeline {

enum class timer_kind : std::uint8_t { pace, path_timeout, retry, credit_wait };

struct timer_entry {
    common::time_ns at = 0;
    std::uint32_t flow = 0;
    std::uint16_t generation = 0;
    timer_kind kind = timer_kind::pace;
    std::uint8_t slot = 0;

    bool operator>(const timer_entry& o) const noexcept { return at > o.at; }
};

class timer_heap {
public:
    explicit timer_heap(std::size_t capacity, std::pmr::memory_resource* memory = std::pmr::get_default_resource())
        : _heap(std::greater<timer_entry>{}, reserved(capacity, memory))
    {
    }

    void push(const timer_entry& e) noexcept { _heap.push(e); }
    bool empty() const noexcept { return _heap.empty(); }
    const timer_entry& top() const noexcept { return _heap.top(); }
    // When the earliest entry is due, not before `now`; time_ns max when empty.
    common::time_ns next_due(common::time_ns now) const noexcept
    {
        return _heap.empty() ? std::numeric_limits<common::time_ns>::max() : std::max(now, _heap.top().at);
    }
    void pop() noexcept { _heap.pop(); }
    std::size_t size() const noexcept { return _heap.size(); }

private:
    static std::pmr::vector<timer_entry> reserved(std::size_t capacity, std::pmr::memory_resource* memory)
    {
        std::pmr::vector<timer_entry> v(memory);
        v.reserve(capacity);
        return v;
    }

    std::priority_queue<timer_entry, std::pmr::vector<timer_entry>, std::greater<timer_entry>> _heap;
};

} // namespace laps::pipeline
