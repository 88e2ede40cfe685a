#include "pipeline/flow_slots.hpp"
#include "pipeline/engine.hpp"
#include "pipeline/flow_state.hpp"

#include <rte_errno.h>
#include <rte_hash_crc.h>

#include <algorithm>
#include <bit>

namespace laps::pipeline {

hash_ptr make_flow_hash(const std::string& name, std::uint32_t entries, std::uint32_t key_len, int socket_id)
{
    rte_hash_parameters params{};
    params.name = name.c_str();
    // rte_hash takes no fewer keys than a bucket holds; flow_slots hands out
    // only the slots it was given.
    params.entries = std::max<std::uint32_t>(entries, 8); // RTE_HASH_BUCKET_ENTRIES, not exported
    params.key_len = key_len;
    // The data path hashes keys itself and looks them up by hash
    // (wire/key_hash.hpp): it computes rte_hash_crc with seed 0, so the
    // function and its initial value (0, unset) must stay these.
    params.hash_func = rte_hash_crc;
    params.socket_id = socket_id;
    // One thread uses the table: no concurrency flags; the extendable table
    // guarantees that `entries` keys fit whatever their hashes.
    params.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
    rte_hash* h = rte_hash_create(&params);
    if (h == nullptr) {
        throw engine_error("engine: cannot create hash table '" + name + "' of " + std::to_string(entries) +
                           " keys: " + rte_strerror(rte_errno));
    }
    return hash_ptr(h);
}

flow_index::flow_index(const std::string& name, std::uint32_t send_capacity, std::uint32_t receive_capacity,
                       std::uint32_t destination_capacity, int socket_id)
    : _send(make_flow_hash(name + "_sf", std::max(send_capacity, 1u), sizeof(wire::flow_key), socket_id)),
      _receive(make_flow_hash(name + "_rf", std::max(receive_capacity, 1u), sizeof(receive_key), socket_id)),
      _destinations(name + "_pst", destination_capacity, socket_id)
{
}

flow_slots::flow_slots(const std::string& name, std::uint32_t capacity, std::uint32_t key_len, int socket_id)
    : _own(make_flow_hash(name, capacity, key_len, socket_id)), _hash(_own.get()), _capacity(capacity)
{
}

flow_slots::flow_slots(rte_hash* shared, std::uint32_t capacity, std::pmr::memory_resource* memory)
    : _hash(shared), _capacity(capacity), _shared(true), _free(std::bit_ceil(std::max(capacity, 1u)), memory),
      _free_count(capacity)
{
    for (std::uint32_t i = 0; i < capacity; ++i) {
        _free[i] = i;
    }
}

void flow_slots::find_bulk(const void** keys, hash_sig_t* hashes, std::uint32_t n, std::int32_t* slots) const noexcept
{
    if (!_shared) {
        rte_hash_lookup_with_hash_bulk(_hash, keys, hashes, n, slots);
        return;
    }
    std::uint64_t hits = 0;
    void* data[RTE_HASH_LOOKUP_BULK_MAX];
    rte_hash_lookup_with_hash_bulk_data(_hash, keys, hashes, n, &hits, data);
    for (std::uint32_t i = 0; i < n; ++i) {
        slots[i] = (hits >> i) & 1 ? static_cast<std::int32_t>(reinterpret_cast<std::uintptr_t>(data[i])) : -1;
    }
}

std::int32_t flow_slots::add(const void* key, std::uint32_t hash) noexcept
{
    if (!_shared) {
        const std::int32_t position = rte_hash_add_key_with_hash(_hash, key, hash);
        if (position >= 0 && static_cast<std::uint32_t>(position) >= _capacity) {
            rte_hash_del_key_with_hash(_hash, key, hash); // beyond the engine's slots
            return -ENOSPC;
        }
        return position;
    }
    if (_free_count == 0) {
        return -ENOSPC;
    }
    const std::uint32_t slot = _free[_free_head];
    void* data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(slot));
    if (rte_hash_add_key_with_hash_data(_hash, key, hash, data) != 0) {
        return -ENOSPC; // the shared table is full: the slot stays free
    }
    _free_head = (_free_head + 1) & static_cast<std::uint32_t>(_free.size() - 1);
    --_free_count;
    return static_cast<std::int32_t>(slot);
}

void flow_slots::remove(const void* key, std::uint32_t hash, std::uint32_t slot) noexcept
{
    if (rte_hash_del_key_with_hash(_hash, key, hash) < 0 || !_shared) {
        return;
    }
    const auto mask = static_cast<std::uint32_t>(_free.size() - 1);
    _free[(_free_head + _free_count) & mask] = slot;
    ++_free_count;
}

} // namespace laps::pipeline
