#pragma once
// The discrete-event queue of the testbed: events in virtual time (ns), ties
// broken by insertion order so that a run is the same every time.
//
// A binary heap over a vector: after the first few thousand events it stops
// growing, so the event loop allocates nothing in steady state.

#include "common/time.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace laps::fabric {

using common::time_ns;

// "Never": a deadline or timer that is not set.
inline constexpr time_ns no_time = std::numeric_limits<time_ns>::max();

enum class event_kind : std::uint8_t {
    tx_done,      // a port finished serialising its packet (target: port)
    arrival,      // a packet reaches the far end of a link (target: packet, arg: port)
    flow_start,   // the next flow(s) of the pre-generated list start
    fault,        // a scheduled fault (target: fault index)
    pfc,          // a PFC PAUSE (arg 1) or RESUME (arg 0) reaches a port (target: port)
    host_timer,   // a timer of the hosts' transport (fabric/hosts/: target and arg are its own)
    scheme_timer, // a timer of the scheme (fabric/schemes/: target and arg are its own)
};

struct event {
    time_ns at = 0;
    std::uint64_t order = 0; // insertion order: equal times run first-scheduled first
    std::uint32_t target = 0;
    std::uint32_t arg = 0;
    event_kind kind = event_kind::tx_done;
};

class event_queue {
public:
    void reserve(std::size_t n) { _heap.reserve(n); }

    void push(time_ns at, event_kind kind, std::uint32_t target, std::uint32_t arg = 0)
    {
        _heap.push_back(event{at, _next_order++, target, arg, kind});
        std::push_heap(_heap.begin(), _heap.end(), later);
    }

    bool empty() const noexcept { return _heap.empty(); }
    std::size_t size() const noexcept { return _heap.size(); }
    const event& top() const noexcept { return _heap.front(); }

    event pop() noexcept
    {
        std::pop_heap(_heap.begin(), _heap.end(), later);
        const event e = _heap.back();
        _heap.pop_back();
        return e;
    }

    // Events pushed so far (a deterministic measure of work).
    std::uint64_t pushed() const noexcept { return _next_order; }

    // Every pending event, in no particular order (teardown).
    const std::vector<event>& pending() const noexcept { return _heap; }
    void clear() noexcept { _heap.clear(); }

private:
    // std heaps are max-heaps: "a is later than b" puts the earliest on top.
    static bool later(const event& a, const event& b) noexcept
    {
        return a.at != b.at ? a.at > b.at : a.order > b.order;
    }

    std::vector<event> _heap;
    std::uint64_t _next_order = 0;
};

} // namespace laps::fabric
