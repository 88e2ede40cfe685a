#pragma once
// A small, seedable random generator owned by one lcore or one engine.
//
// Why not rte_rand(): its state is per lcore and seeded once per process, so
// the testbed (hundreds of engines on one thread) could not give each engine
// its own reproducible stream. SplitMix64 passes BigCrush, costs three
// multiplies, and its whole state is one word, so a seed fully determines it.

#include <cstdint>
#include <limits>

namespace laps::common {

class rng {
public:
    using result_type = std::uint64_t;

    explicit rng(std::uint64_t seed) noexcept : _state(seed) {}

    static constexpr result_type min() noexcept { return 0; }
    static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }

    result_type operator()() noexcept
    {
        std::uint64_t z = (_state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

    std::uint32_t next32() noexcept { return static_cast<std::uint32_t>((*this)() >> 32); }

    // Uniform in [0, n), n > 0, by multiply-shift (bias below 2^-32 * n).
    std::uint32_t below(std::uint32_t n) noexcept
    {
        return static_cast<std::uint32_t>((static_cast<std::uint64_t>(next32()) * n) >> 32);
    }

    // Uniform in [0, 1) with 53 random bits.
    double unit() noexcept { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

private:
    std::uint64_t _state;
};

} // namespace laps::common
