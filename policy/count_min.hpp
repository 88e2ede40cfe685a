#pragma once
// A Count-Min Sketch (Cormode and Muthukrishnan, J. Algorithms 2005): `depth`
// rows of `width` counters; a key adds to one counter per row (one hash per
// row) and its estimate is the smallest of them, never below its true count.
// Reunion's source switches use it to tell elephant flows from mice (seed
// 000, §3.2) without a per-flow entry.

#include <cstdint>
#include <vector>

namespace laps::policy {

class count_min {
public:
    count_min(std::uint32_t depth, std::uint32_t width, std::uint64_t seed)
        : _depth(depth == 0 ? 1 : depth), _width(width == 0 ? 1 : width), _seed(seed), _counts(_depth * _width, 0)
    {
    }

    // Adds `amount` to `key` and returns its new estimate.
    std::uint64_t add(std::uint64_t key, std::uint64_t amount) noexcept
    {
        std::uint64_t estimate = ~std::uint64_t{0};
        for (std::uint32_t row = 0; row < _depth; ++row) {
            auto& c = _counts[row * _width + slot(key, row)];
            c += amount;
            estimate = c < estimate ? c : estimate;
        }
        return estimate;
    }

    std::uint64_t estimate(std::uint64_t key) const noexcept
    {
        std::uint64_t estimate = ~std::uint64_t{0};
        for (std::uint32_t row = 0; row < _depth; ++row) {
            const auto c = _counts[row * _width + slot(key, row)];
            estimate = c < estimate ? c : estimate;
        }
        return estimate;
    }

    void clear() noexcept { _counts.assign(_counts.size(), 0); }

private:
    std::uint32_t slot(std::uint64_t key, std::uint32_t row) const noexcept
    {
        std::uint64_t x = key ^ (_seed + 0x9e3779b97f4a7c15ULL * (row + 1u));
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdULL;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ULL;
        x ^= x >> 33;
        return static_cast<std::uint32_t>(x % _width);
    }

    std::uint32_t _depth;
    std::uint32_t _width;
    std::uint64_t _seed;
    std::vector<std::uint64_t> _counts;
};

} // namespace laps::policy
