#pragma once
// An exact-match cache in front of a flow table's rte_hash, as OVS-DPDK puts
// its EMC in front of its classifier: a direct-mapped array from a key's hash
// to the flow slot where that key was last found. A lookup in rte_hash costs
// 100-300 instructions per key (buckets, signatures, the key compare through
// a jump table, the extendable table's chain); a hit here is one load and
// the caller's compare of the key it finds in the slot.
//
// The cache only proposes a slot: the caller accepts it only when the slot
// is active and holds the very key (`same_key`), so a stale entry (the flow
// evicted, its slot reused by another key) is a miss, never a wrong flow.
// rte_hash stays the table of record; a miss goes to it and its answer is
// remembered here. Forged keys that collide only push entries out: the
// worst case is rte_hash's own cost.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory_resource>
#include <type_traits>
#include <vector>

namespace laps::pipeline {

class flow_cache {
public:
    static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
    // Twice the table's flows, so that few live flows share an entry; at
    // most max_entries (8 MiB of entries).
    static constexpr std::uint32_t max_entries = 1u << 20;

    flow_cache(std::uint32_t flows, std::pmr::memory_resource* memory)
        : _entries(std::bit_ceil(std::clamp(2 * std::max(flows, 1u), 2u, max_entries)), entry{}, memory),
          _mask(static_cast<std::uint32_t>(_entries.size()) - 1)
    {
    }

    // The slot a key with this hash was last found at, or `none`.
    std::uint32_t find(std::uint32_t hash) const noexcept
    {
        const entry& e = _entries[hash & _mask];
        return e.hash == hash ? e.slot : none;
    }
    // Starts loading the entry of this hash (a burst prefetches all its
    // entries before it reads the first).
    void prefetch(std::uint32_t hash) const noexcept { __builtin_prefetch(&_entries[hash & _mask]); }
    void remember(std::uint32_t hash, std::uint32_t slot) noexcept { _entries[hash & _mask] = entry{hash, slot}; }
    // The slot no longer holds the key of this hash (its flow is gone).
    void forget(std::uint32_t hash, std::uint32_t slot) noexcept
    {
        entry& e = _entries[hash & _mask];
        if (e.hash == hash && e.slot == slot) {
            e.slot = none;
        }
    }
    std::uint32_t entries() const noexcept { return _mask + 1; }

    // Whether two keys are the same: their bytes, word by word (rte_hash
    // compares keys as bytes too; flow keys are hole-free and zero-padded).
    // Not flow_key's defaulted ==: it compares the addresses byte by byte,
    // and the sender's burst cost 103 instructions more per packet with it.
    template <typename Key>
    static bool same_key(const Key& a, const Key& b) noexcept
    {
        static_assert(sizeof(Key) % 8 == 0 && std::has_unique_object_representations_v<Key>);
        std::uint64_t differ = 0;
        for (std::size_t i = 0; i < sizeof(Key); i += 8) {
            std::uint64_t x;
            std::uint64_t y;
            std::memcpy(&x, reinterpret_cast<const char*>(&a) + i, 8);
            std::memcpy(&y, reinterpret_cast<const char*>(&b) + i, 8);
            differ |= x ^ y;
        }
        return differ == 0;
    }

private:
    struct entry {
        std::uint32_t hash = 0;
        std::uint32_t slot = none;
    };
    std::pmr::vector<entry> _entries;
    std::uint32_t _mask;
};

} // namespace laps::pipeline
