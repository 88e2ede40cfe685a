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

class pst {
public:
    // rte_hash's own bulk limit (RTE_HASH_LOOKUP_BULK_MAX).
    static constexpr unsigned max_burst = 64;

    // `name` must be unique in the process (rte_hash names are global).
    pst(const std::string& name, std::uint32_t capacity, int socket_id = -1);
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
    // call it from the thread that edits the table.
    template <typename F>
    void for_each(F&& visit) const
    {
        const void* key = nullptr;
        void* data = nullptr;
        std::uint32_t next = 0;
        while (iterate(&key, &data, &next)) {
            visit(*static_cast<const address*>(key), static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(data)));
        }
    }
    std::uint32_t capacity() const noexcept { return _capacity; }

private:
    bool iterate(const void** key, void** data, std::uint32_t* next) const noexcept;

    rte_hash* _hash = nullptr;
    std::uint32_t _capacity;
    std::atomic<std::uint32_t> _size{0};
    rte_rcu_qsbr* _rcu = nullptr;
};

} // namespace laps::tables
