#pragma once
// Aging by a clock hand: a few slots of a table visited per call, so the
// cost of forgetting idle entries stays flat whatever the table's size
// (receive flows, sender flows, authenticated senders' replay windows).

#include "common/time.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>

namespace laps::pipeline {

inline constexpr std::uint32_t no_slot = std::numeric_limits<std::uint32_t>::max();
// Slots an aging hand visits per poll (sender and receiver flows).
inline constexpr std::uint32_t aging_slots_per_poll = 8;

// Visits `count` slots from `hand` (which moves on, wrapping at `slots`),
// calling `visit(index)` on each.
template <typename Visit>
void sweep(std::uint32_t& hand, std::size_t slots, std::uint32_t count, Visit&& visit) noexcept
{
    const auto end = static_cast<std::uint32_t>(slots);
    for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint32_t index = hand;
        hand = hand + 1 < end ? hand + 1 : 0; // not %: a division per slot
        visit(index);
    }
}

// Among the next `count` slots from `hand`, the one quiet longest, if it has
// been quiet for more than `idle`: `last_active(index)` points at a slot's
// last activity, or is null for a free slot. no_slot when none qualifies.
template <typename LastActive>
std::uint32_t longest_quiet(std::uint32_t& hand, std::size_t slots, std::uint32_t count, common::time_ns now,
                            common::time_ns idle, LastActive&& last_active) noexcept
{
    std::uint32_t victim = no_slot;
    common::time_ns oldest = now;
    sweep(hand, slots, count, [&](std::uint32_t index) {
        const common::time_ns* last = last_active(index);
        if (last != nullptr && now - *last > idle && *last < oldest) {
            oldest = *last;
            victim = index;
        }
    });
    return victim;
}

} // namespace laps::pipeline
