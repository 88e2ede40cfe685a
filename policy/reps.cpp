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
    const bool freeze = frozen(now) && _has_last_good;
    // Lines 6-7: the first BDP explores, until every entropy was tried once.
    if (!freeze && seq < _config.explore_packets && _explored < _config.entropies) {
        return next_unexplored();
    }
    if (_count > 0) {
        ++_recycled;
        const std::uint16_t e = _ring[_head]; // the oldest first (§3)
        _head = static_cast<std::uint16_t>((_head + 1u) % _config.cache_size);
        --_count;
        return e;
    }
    if (freeze) {
        ++_recycled;
        return _last_good; // frozen: no exploration while a path may be broken
    }
    return next_unexplored(); // GET_EARLIEST_ENTROPY with an empty cache (line 21)
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
    _last_good = entropy;
    _has_last_good = true;
}

void reps::on_timeout(time_ns now) noexcept
{
    if (_config.freeze_ns > 0) {
        _frozen_until = now + _config.freeze_ns;
    }
}

} // namespace laps::policy
