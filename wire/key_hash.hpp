#pragma once
// The hash of the engine's rte_hash keys, computed once per packet by the
// engine and handed to rte_hash_*_with_hash (docs/PERFORMANCE.md §7).
//
// The tables are created with hash_func = rte_hash_crc, and key_hash gives
// the same value: CRC-32C over the key's 64-bit words. rte_hash_crc chooses
// the CPU instruction at run time, by a flag it reads again for every 8
// bytes, and rte_hash calls it through a function pointer; on a target that
// has the instruction at compile time (x86 SSE4.2, the -march=corei7 that
// DPDK builds with; Armv8 CRC) this uses DPDK's own single-instruction step
// inline. Other targets call rte_hash_crc.
//
// Include it only from code that links EAL: rte_hash_crc.h registers a
// constructor that asks EAL for the CPU's flags.

#include <rte_hash_crc.h>

#include <cstdint>
#include <cstring>

namespace laps::wire {

template <typename Key>
inline std::uint32_t key_hash(const Key& key, std::uint32_t seed = 0) noexcept
{
    static_assert(sizeof(Key) % 8 == 0, "whole 64-bit words: rte_hash_crc's tail handling is not repeated here");
#if (defined(RTE_ARCH_X86) && defined(__SSE4_2__)) || (defined(RTE_ARCH_ARM64) && defined(__ARM_FEATURE_CRC32))
    const auto* bytes = reinterpret_cast<const unsigned char*>(&key);
    std::uint32_t hash = seed;
    for (std::size_t i = 0; i < sizeof(Key); i += 8) {
        std::uint64_t word;
        std::memcpy(&word, bytes + i, sizeof word);
#if defined(RTE_ARCH_X86)
        hash = crc32c_sse42_u64(word, hash);
#else
        hash = crc32c_arm64_u64(word, hash);
#endif
    }
    return hash;
#else
    return rte_hash_crc(&key, sizeof(Key), seed);
#endif
}

} // namespace laps::wire
