#pragma once
// The discrete-event queue of the testbed: events in virtual time (ns), ties
// broken by insertion order so that a run is the same every time.
//
// A 4-ary heap over a vector, and FIFO lanes (rings) for the events that
// come in time order (push_after): after the first few thousand events
// neither grows, so the event loop allocates nothing in steady state.

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
        push_heap(event{at, _next_order++, target, arg, kind});
    }

    // An event `delay` after `now`, the loop's current time (a link's
    // arrivals: now + its propagation delay). Now never goes back, so the
    // events of one delay come in time order: each delay keeps a FIFO lane
    // instead of a place in the heap, and pop() merges the lanes' heads with
    // the heap's top by (time, order): the same order as one heap, for less
    // than half its work.
    void push_after(time_ns now, time_ns delay, event_kind kind, std::uint32_t target, std::uint32_t arg = 0)
    {
        for (auto& l : _lanes) {
            if (l.delay == delay) {
                l.push(now + delay, _next_order++, target, arg, kind);
                ++_in_lanes;
                return;
            }
        }
        if (_lanes.size() < max_lanes) {
            _lanes.reserve(max_lanes); // lane pointers (_last_lane) stay valid
            _lanes.push_back(lane{delay, {}, 0, 0});
            _lanes.back().push(now + delay, _next_order++, target, arg, kind);
            ++_in_lanes;
            return;
        }
        // More distinct delays than lanes: the heap orders them.
        push_heap(event{now + delay, _next_order++, target, arg, kind});
    }

    bool empty() const noexcept { return _heap.empty() && _in_lanes == 0; }
    std::size_t size() const noexcept { return _heap.size() + _in_lanes; }
    const event& top() const noexcept
    {
        const lane* l = earliest_lane();
        return l != nullptr ? l->head() : _heap.front();
    }

    event pop() noexcept
    {
        if (lane* l = earliest_lane()) {
            --_in_lanes;
            return l->pop();
        }
        return pop_heap();
    }

    // The earliest event into `out` if there is one due at or before `t`
    // (top() and pop() in one: the lanes' heads are compared once).
    bool pop_through(time_ns t, event& out) noexcept
    {
        lane* l = earliest_lane();
        if (l != nullptr) {
            if (l->head().at > t) {
                return false;
            }
            --_in_lanes;
            l->pop_into(out);
            _last_lane = l;
            return true;
        }
        if (_heap.empty() || _heap.front().at > t) {
            return false;
        }
        out = pop_heap();
        _last_lane = nullptr;
        return true;
    }

    // The event `distance` places after the one pop_through() just took
    // from a lane, in that lane; null when it took the heap's top or the
    // lane is shorter. The loop prefetches what that event will touch: a
    // lane's events run in its order, and the fabric's records they name
    // are cold by then on a large fabric.
    const event* lane_ahead(std::size_t distance) const noexcept
    {
        if (_last_lane == nullptr) {
            return nullptr;
        }
        const std::size_t i = distance - 1;
        return i < _last_lane->count ? &_last_lane->nth(i) : nullptr;
    }

    // Events pushed so far (a deterministic measure of work).
    std::uint64_t pushed() const noexcept { return _next_order; }

    // Every pending event, in no particular order (teardown).
    template <typename Visit>
    void for_each_pending(Visit&& visit) const
    {
        for (const auto& e : _heap) {
            visit(e);
        }
        for (const auto& l : _lanes) {
            for (std::size_t i = 0; i < l.count; ++i) {
                visit(l.nth(i));
            }
        }
    }
    void clear() noexcept
    {
        _heap.clear();
        _lanes.clear();
        _in_lanes = 0;
        _last_lane = nullptr;
    }

private:
    // A 4-ary heap: half the depth of a binary one, and a node's children
    // share a cache line or two.
    static constexpr std::size_t arity = 4;
    // Links of a fabric have few distinct delays (one on the paper's fabrics).
    static constexpr std::size_t max_lanes = 8;
    // How many slots ahead of a lane's tail push() prefetches (two a line).
    static constexpr std::size_t push_prefetch = 8;
    static constexpr std::size_t min_lane_slots = 64;

    static bool before(const event& a, const event& b) noexcept
    {
        return a.at != b.at ? a.at < b.at : a.order < b.order;
    }

    // A lane is a ring of a power-of-two number of slots, grown by doubling
    // when full. (A vector that dropped its popped half now and then moved
    // every event once more: 2% of a large run's instructions and a sixth of
    // its cache-missing writes, in memmove.)
    struct lane {
        time_ns delay = 0;
        std::vector<event> slots; // size 0 or a power of two
        std::size_t first = 0;    // the head's slot
        std::size_t count = 0;

        std::size_t mask() const noexcept { return slots.size() - 1; }
        const event& head() const noexcept { return slots[first]; }
        bool empty() const noexcept { return count == 0; }
        // The event `i` places after the head; i < count.
        const event& nth(std::size_t i) const noexcept { return slots[(first + i) & mask()]; }
        // Each field stored into the lane's slot: an event built on the stack
        // and copied in 16-byte moves stalled on store forwarding, once per
        // event. Then the slot a few events on, cold since the lane last
        // passed it, is asked for.
        void push(time_ns at, std::uint64_t order, std::uint32_t target, std::uint32_t arg, event_kind kind)
        {
            if (count == slots.size()) {
                grow();
            }
            const std::size_t tail = first + count;
            event& e = slots[tail & mask()];
            ++count;
            e.at = at;
            e.order = order;
            e.target = target;
            e.arg = arg;
            e.kind = kind;
            __builtin_prefetch(&slots[(tail + push_prefetch) & mask()], 1);
        }
        event pop() noexcept
        {
            event e;
            pop_into(e);
            return e;
        }
        // Straight into `out`: a copy through a temporary cost a
        // store-forwarding stall per event (the event is 25 bytes of 32).
        void pop_into(event& out) noexcept
        {
            out = slots[first];
            first = (first + 1) & mask();
            --count;
        }
        void grow()
        {
            std::vector<event> bigger(std::max<std::size_t>(min_lane_slots, 2 * slots.size()));
            for (std::size_t i = 0; i < count; ++i) {
                bigger[i] = nth(i);
            }
            slots.swap(bigger);
            first = 0;
        }
    };

    // The lane whose head comes before the heap's top (and every other
    // lane's head); null when the heap's top is first.
    lane* earliest_lane() const noexcept
    {
        if (_in_lanes == 0) {
            return nullptr;
        }
        const event* best = _heap.empty() ? nullptr : &_heap.front();
        const lane* from = nullptr;
        for (const auto& l : _lanes) {
            if (!l.empty() && (best == nullptr || before(l.head(), *best))) {
                best = &l.head();
                from = &l;
            }
        }
        return const_cast<lane*>(from);
    }

    void push_heap(const event& e)
    {
        std::size_t i = _heap.size();
        _heap.push_back(e);
        event* h = _heap.data();
        while (i > 0) {
            const std::size_t parent = (i - 1) / arity;
            if (!before(e, h[parent])) {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = e;
    }

    event pop_heap() noexcept
    {
        const event top = _heap.front();
        const event last = _heap.back();
        _heap.pop_back();
        const std::size_t n = _heap.size();
        if (n == 0) {
            return top;
        }
        event* h = _heap.data();
        std::size_t i = 0;
        while (true) {
            const std::size_t child = arity * i + 1;
            if (child >= n) {
                break;
            }
            std::size_t best = child;
            const std::size_t end = std::min(child + arity, n);
            for (std::size_t c = child + 1; c < end; ++c) {
                if (before(h[c], h[best])) {
                    best = c;
                }
            }
            if (!before(h[best], last)) {
                break;
            }
            h[i] = h[best];
            i = best;
        }
        h[i] = last;
        return top;
    }

    std::vector<event> _heap;
    std::vector<lane> _lanes;
    std::size_t _in_lanes = 0;
    std::uint64_t _next_order = 0;
    const lane* _last_lane = nullptr; // the lane pop_through() last took from
};

} // namespace laps::fabric
