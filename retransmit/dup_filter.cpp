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
    if (seq == _base) {
        // In order, the usual case: _base's bit is always clear (the slide
        // below never stops on a set bit), so there is nothing to set and
        // clear again; slide over what arrived early.
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
    set(seq);
    // Slide over the now-contiguous prefix, clearing bits for reuse.
    while (test(_base)) {
        clear(_base);
        ++_base;
    }
    return receive_verdict::fresh;
}

} // namespace laps::retransmit
