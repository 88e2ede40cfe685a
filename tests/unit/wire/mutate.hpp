#pragma once
// Random corruptions of valid packets, for the tests that hold a fast path
// to its general parser (parse, classify): 0-3 header bytes replaced, often
// by a neighbour of the old value so that limits are crossed by one; one
// time in eight a shorter frame; one time in four a shorter readable head.

#include "tests/unit/wire/packet_builder.hpp"

#include <algorithm>
#include <cstddef>
#include <random>

namespace laps::test {

struct mutated {
    bytes data;
    std::size_t frame = 0; // the frame length the parser is told
    std::size_t head = 0;  // the bytes it may read
};

// `within`: only the first `within` bytes are edited (the headers).
inline mutated mutate(bytes p, std::size_t within, std::mt19937& rng)
{
    const int edits = static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
        const std::size_t at = rng() % std::min(p.size(), within);
        const std::uint32_t how = rng() % 3;
        p[at] = how == 0 ? static_cast<std::uint8_t>(rng()) : static_cast<std::uint8_t>(p[at] + (how == 1 ? 1 : -1));
    }
    std::size_t frame = p.size();
    if (rng() % 8 == 0) {
        frame = rng() % (p.size() + 1);
    }
    const std::size_t head = rng() % 4 == 0 ? rng() % (frame + 1) : frame;
    return {std::move(p), frame, head};
}

} // namespace laps::test
