#pragma once
// PST, the Path Search Table (paper §III-C): destination address -> path set.
//
// Backed by rte_hash with lock-free readers (RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF):
// worker lcores look up without ever taking a lock while the control plane
// adds or deletes destinations. With an RCU variable attached (attach_rcu), a
// removed key's slot is reused only after every registered reader has passed
// a quiescent state; without one, the owner must be the only thread (tests,
// testbed).
//
// Needs an initialised EAL (rte_hash allocates from DPDK memory).
//
// Own or shared: a PST is an rte_hash of its own, or its owner's rows in a
// pst_index that many PSTs of one process share, each keyed by (destination,
// owner). Why shared: each rte_hash costs two memzones (its free-slot ring, its
// extendable table's ring) and DPDK 22.11 allows RTE_MAX_MEMZONE = 2,560 per
// process, so a testbed of thousands of hosts cannot give each engine a table
// of its own (docs/testbed.md, "Memory and scale").

#include "tables/address.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

struct rte_hash;
struct rte_rcu_qsbr;

namespace laps::tables {

class pst_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The table behind many shared PSTs: as many rows as their capacities add up to.
class pst_index {
public:
    pst_index(const std::string& name, std::uint32_t capacity, int socket_id = -1);
    ~pst_index();
    pst_index(const pst_index&) = delete;
    pst_index& operator=(const pst_index&) = delete;

    rte_hash* table() const noexcept { return _hash; }

private:
    rte_hash* _hash = nullptr;
};

class pst {
public:
    // rte_hash's own bulk limit (RTE_HASH_LOOKUP_BULK_MAX).
    static constexpr unsigned max_burst = 64;

    // `name` must be unique in the process (rte_hash names are global).
    pst(const std::string& name, std::uint32_t capacity, int socket_id = -1);
    // `owner`'s rows of `shared` (not owned), at most `capacity` of them;
    // `owner` is non-zero and unique among the PSTs of `shared` for the
    // table's life: the rows stay in `shared` after this PST goes.
    pst(pst_index& shared, std::uint32_t owner, std::uint32_t capacity);
    ~pst();
    pst(const pst&) = delete;
    pst& operator=(const pst&) = delete;

    // Control plane. add() replaces the set of an existing destination.
    void add(const address& destination, std::uint32_t set);
    bool remove(const address& destination);
    void attach_rcu(rte_rcu_qsbr* qsbr);

    // Data plane, lock-free.
    std::optional<std::uint32_t> find(const address& destination) const noexcept;
    // Looks up `count` (<= max_burst) keys; bit i of the result is set when
    // keys[i] was found, and then sets[i] holds its set.
    std::uint64_t find_burst(const address* const* keys, unsigned count, std::uint32_t* sets) const noexcept;

    // Destinations in the table. Counted here: with RCU, rte_hash_count
    // also counts deleted keys whose slots wait for a grace period.
    std::uint32_t size() const noexcept { return _size.load(std::memory_order_relaxed); }

    // Every (destination, set), in table order. Not concurrent with writers:
    // call it from the thread that edits the table. Shared: walks the whole
    // shared table for this owner's rows.
    template <typename F>
    void for_each(F&& visit) const
    {
        const void* key = nullptr;
        void* data = nullptr;
        std::uint32_t next = 0;
        while (iterate(&key, &data, &next)) {
            if (_owner != 0 && static_cast<const shared_key*>(key)->owner != _owner) {
                continue;
            }
            visit(*static_cast<const address*>(key), static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(data)));
        }
    }
    std::uint32_t capacity() const noexcept { return _capacity; }

    // A row of a shared table: the destination first, so that for_each reads
    // it where an own table's key is.
    struct shared_key {
        address destination;
        std::uint32_t owner = 0;
        std::uint32_t zero = 0; // hashed with the rest: always 0
    };

private:
    bool iterate(const void** key, void** data, std::uint32_t* next) const noexcept;
    // The key rte_hash stores for `destination`: itself (own) or a shared_key.
    const void* key_of(const address& destination, shared_key& scratch) const noexcept
    {
        if (_owner == 0) {
            return &destination;
        }
        scratch.destination = destination;
        scratch.owner = _owner;
        return &scratch;
    }

    // Whether the rte_hash is this table's own (owner 0), not a pst_index's.
    bool owns_table() const noexcept { return _owner == 0; }

    rte_hash* _hash = nullptr;
    std::uint32_t _owner = 0; // 0: a table of its own; else its rows' owner in a pst_index
    std::uint32_t _capacity;
    std::atomic<std::uint32_t> _size{0};
    rte_rcu_qsbr* _rcu = nullptr;
};

} // namespace laps::tables
