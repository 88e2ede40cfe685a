#include "retransmit/dup_filter.hpp"

#include <bit>

namespace laps::retransmit {

dup_filter::dup_filter(std::uint32_t window, std::pmr::memory_resource* memory)
    : _bits(memory), _window(std::bit_ceil(window < 64 ? 64u : window)), _mask(_window - 1)
{
    _bits.assign(_window / 64, 0);
}

receive_verdict dup_filter::on_receive(std::uint32_t seq) noexcept
{
    // _base's bit is always clear: the slide below never stops on a set bit.
    if (seq == _base) {
        // In order: the base moves on, over what arrived early, clearing
        // their bits for reuse.
        ++_base;
        while (test(_base)) {
            clear(_base);
            ++_base;
        }
        return receive_verdict::fresh;
    }
    const auto ahead = static_cast<std::int32_t>(seq - _base);
    if (ahead < 0) {
        return receive_verdict::duplicate;
    }
    if (static_cast<std::uint32_t>(ahead) >= _window) {
        return receive_verdict::beyond_window;
    }
    if (test(seq)) {
        return receive_verdict::duplicate;
    }
    // Early: remembered until the base reaches it (the base cannot move now).
    set(seq);
    return receive_verdict::fresh;
}

void dup_filter::slide_to(std::uint32_t start) noexcept
{
    if (start - _base >= _window) {
        reset(start); // every remembered bit is behind `start`
    } else {
        for (; _base != start; ++_base) {
            clear(_base);
        }
    }
    // As in on_receive: the base never rests on what arrived early.
    while (test(_base)) {
        clear(_base);
        ++_base;
    }
}

} // namespace laps::retransmit
