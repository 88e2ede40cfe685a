#pragma once
// The replay window of one authenticated sender (docs/security.md): the
// highest counter accepted and a bitmap of the `bits` below it, as IPsec's
// anti-replay window (RFC 4303 §3.4.3). A counter is accepted once; one
// `bits` or more below the highest is refused as too old. Packets of one
// engine reach a receiver out of order by at most what that engine sends
// while its slowest path lags its fastest: 4,096 counters hold 400 us at
// 10 Mpps.
//
// Only a packet whose tag verified may move the window (auth.hpp): a forger
// cannot push it ahead to make genuine packets look old.

#include <algorithm>
#include <array>
#include <cstdint>

namespace laps::wire {

class replay_window {
public:
    static constexpr std::uint32_t bits = 4096;

    // Whether `counter` (>= 1) is new; if so it is now seen.
    bool accept(std::uint64_t counter) noexcept
    {
        if (counter == 0) {
            return false; // counters start at 1
        }
        if (counter > _highest) {
            const std::uint64_t shift = counter - _highest;
            if (shift >= bits) {
                _seen = {};
            } else if (shift > 1) {
                clear_range(_highest + 1, counter - 1); // skipped: not seen yet, they may still come
            }
            _highest = counter;
            set(counter);
            return true;
        }
        if (_highest - counter >= bits || test(counter)) {
            return false;
        }
        set(counter);
        return true;
    }

    std::uint64_t highest() const noexcept { return _highest; }

private:
    bool test(std::uint64_t c) const noexcept { return (_seen[(c % bits) / 64] >> (c % 64)) & 1u; }
    void set(std::uint64_t c) noexcept { _seen[(c % bits) / 64] |= std::uint64_t{1} << (c % 64); }
    // Clears [first, last] (fewer than `bits` counters), a word at a time.
    void clear_range(std::uint64_t first, std::uint64_t last) noexcept
    {
        while (first <= last) {
            const unsigned bit = static_cast<unsigned>(first % 64);
            const std::uint64_t n = std::min<std::uint64_t>(64 - bit, last - first + 1);
            const std::uint64_t mask = n == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1) << bit;
            _seen[(first % bits) / 64] &= ~mask;
            first += n;
        }
    }

    std::uint64_t _highest = 0;
    std::array<std::uint64_t, bits / 64> _seen{};
};

} // namespace laps::wire
