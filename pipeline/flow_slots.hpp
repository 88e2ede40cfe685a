#pragma once
// Key -> slot of an engine's flows (send flows by wire::flow_key, receive
// flows by receive_key), over rte_hash in one of two ways:
//
//   own     the engine's own rte_hash; a key's slot is its position, as
//           rte_hash hands positions out (the app, the dp tests);
//   shared  one rte_hash for every engine of a process (flow_index), the
//           slot riding as the key's data; the engine hands its slots out
//           itself, first-in first-out from 0 up, which is the order rte_hash
//           gives positions in, so an engine behaves the same either way.
//
// Why shared: each rte_hash costs one or two memzones (its free-slot ring,
// its extendable table's ring) and DPDK 22.11 allows RTE_MAX_MEMZONE = 2,560
// in a process, so a testbed of a thousand hosts cannot give each engine
// its own tables (docs/testbed.md, "Memory and scale"). Keys in a shared
// table must not collide across engines: a send key holds the host's own
// source address, and a receive key's `owner` field carries the engine's
// index_tag (engine_config::flow_index_tag).

#include "tables/pst.hpp"

#include <rte_hash.h>

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

namespace laps::pipeline {

struct hash_deleter {
    void operator()(rte_hash* h) const noexcept { rte_hash_free(h); }
};
using hash_ptr = std::unique_ptr<rte_hash, hash_deleter>;

// An rte_hash with the data path's hash function (rte_hash_crc, seed 0:
// wire/key_hash.hpp computes the same value) and an extendable table, so
// that `entries` keys fit whatever their hashes. Throws engine_error.
hash_ptr make_flow_hash(const std::string& name, std::uint32_t entries, std::uint32_t key_len, int socket_id);

// The shared tables of many engines: one for send flows, one for receive
// flows and one for their PSTs' rows (keyed by flow_index_tag), each as large
// as the sum of the engines' capacities.
class flow_index {
public:
    flow_index(const std::string& name, std::uint32_t send_capacity, std::uint32_t receive_capacity,
               std::uint32_t destination_capacity, int socket_id);

    rte_hash* send() const noexcept { return _send.get(); }
    rte_hash* receive() const noexcept { return _receive.get(); }
    tables::pst_index& destinations() noexcept { return _destinations; }

private:
    hash_ptr _send;
    hash_ptr _receive;
    tables::pst_index _destinations;
};

class flow_slots {
public:
    flow_slots() = default;
    // Over a table of its own of `capacity` keys of `key_len` bytes.
    flow_slots(const std::string& name, std::uint32_t capacity, std::uint32_t key_len, int socket_id);
    // Over `shared` (not owned), handing out slots 0 .. capacity - 1.
    flow_slots(rte_hash* shared, std::uint32_t capacity, std::pmr::memory_resource* memory);

    // The key's slot, or a negative value when it has none.
    std::int32_t find(const void* key, std::uint32_t hash) const noexcept
    {
        if (!_shared) {
            return rte_hash_lookup_with_hash(_hash, key, hash);
        }
        void* data = nullptr;
        return rte_hash_lookup_with_hash_data(_hash, key, hash, &data) < 0
                   ? -1
                   : static_cast<std::int32_t>(reinterpret_cast<std::uintptr_t>(data));
    }
    // `n` <= RTE_HASH_LOOKUP_BULK_MAX keys at once; slots[i] < 0: no slot.
    void find_bulk(const void** keys, hash_sig_t* hashes, std::uint32_t n, std::int32_t* slots) const noexcept;
    // A slot for a key that has none; negative when all are taken.
    std::int32_t add(const void* key, std::uint32_t hash) noexcept;
    // The key leaves; `slot` is the one add() gave it.
    void remove(const void* key, std::uint32_t hash, std::uint32_t slot) noexcept;

    std::uint32_t capacity() const noexcept { return _capacity; }

private:
    hash_ptr _own;
    rte_hash* _hash = nullptr;
    std::uint32_t _capacity = 0;
    bool _shared = false;
    // Shared only: the free slots, a ring in the order they will be given.
    std::pmr::vector<std::uint32_t> _free;
    std::uint32_t _free_head = 0;
    std::uint32_t _free_count = 0;
};

} // namespace laps::pipeline
