#include "policy/reps.hpp"

#include <algorithm>

namespace laps::policy {

reps::reps(const reps_config& c) noexcept : _config(c)
{
    _config.entropies = std::max<std::uint16_t>(1, _config.entropies);
    _config.cache_size = std::clamp<std::uint16_t>(_config.cache_size, 1, max_cache);
}

std::uint16_t reps::next_unexplored() noexcept
{
    const std::uint16_t e = _next_entropy;
    _next_entropy = static_cast<std::uint16_t>((_next_entropy + 1u) % _config.entropies);
    ++_explored;
    return e;
}

std::uint16_t reps::on_send(std::uint32_t seq, time_ns now) noexcept
{
    // Lines 6-7: the first BDP explores, until every entropy was tried once.
    if (seq < _config.explore_packets && _explored < _config.entropies) {
        return next_unexplored();
    }
    if (_count == 0) {
        return next_unexplored(); // GET_EARLIEST_ENTROPY with an empty cache (line 21)
    }
    ++_recycled;
    if (frozen(now)) {
        // Reuse without consuming: the good entropies stay good until the freeze ends.
        _frozen_next = static_cast<std::uint16_t>(_frozen_next % _count);
        const std::uint16_t e = _ring[(_head + _frozen_next) % _config.cache_size];
        ++_frozen_next;
        return e;
    }
    const std::uint16_t e = _ring[_head]; // the oldest first (§3)
    _head = static_cast<std::uint16_t>((_head + 1u) % _config.cache_size);
    --_count;
    return e;
}

void reps::on_ack(std::uint16_t entropy, bool ecn_marked) noexcept
{
    if (ecn_marked) {
        return; // line 14: a marked entropy is not recycled
    }
    const std::uint16_t size = _config.cache_size;
    if (_count == size) {
        // The circular buffer overwrites its oldest entry.
        _head = static_cast<std::uint16_t>((_head + 1u) % size);
        --_count;
    }
    _ring[(_head + _count) % size] = entropy;
    ++_count;
}

void reps::on_timeout(time_ns now) noexcept
{
    if (_config.freeze_ns > 0) {
        _frozen_until = now + _config.freeze_ns;
        _frozen_next = 0;
    }
}

} // namespace laps::policy
