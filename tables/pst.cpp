#include "tables/pst.hpp"

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_rcu_qsbr.h>

#include <algorithm>
#include <cstring>

namespace laps::tables {

namespace {

rte_hash* make_table(const std::string& name, std::uint32_t capacity, std::uint32_t key_len, int socket_id)
{
    rte_hash_parameters params{};
    params.name = name.c_str();
    params.entries = capacity;
    params.key_len = key_len;
    params.hash_func = rte_hash_crc;
    params.hash_func_init_val = 0;
    params.socket_id = socket_id;
    // Lock-free readers; the extendable table guarantees that `capacity` keys
    // fit whatever their hashes (no insert failure below the stated size).
    params.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF | RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
    rte_hash* h = rte_hash_create(&params);
    if (h == nullptr) {
        throw pst_error("PST '" + name + "': rte_hash_create failed: " + rte_strerror(rte_errno));
    }
    return h;
}

// `count` (<= max_burst) keys at once; bit i of the result: keys[i] found,
// its set in sets[i].
std::uint64_t lookup_burst(const rte_hash* hash, const void** keys, unsigned count, std::uint32_t* sets) noexcept
{
    void* data[pst::max_burst];
    std::uint64_t hits = 0;
    if (rte_hash_lookup_bulk_data(hash, keys, count, &hits, data) < 0) {
        return 0;
    }
    for (std::uint64_t m = hits; m != 0; m &= m - 1) {
        const unsigned i = static_cast<unsigned>(__builtin_ctzll(m));
        sets[i] = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(data[i]));
    }
    return hits;
}

} // namespace

pst_index::pst_index(const std::string& name, std::uint32_t capacity, int socket_id)
    : _hash(make_table(name, std::max<std::uint32_t>(capacity, 8), sizeof(pst::shared_key), socket_id))
{
}

pst_index::~pst_index()
{
    rte_hash_free(_hash);
}

pst::pst(const std::string& name, std::uint32_t capacity, int socket_id) : _capacity(capacity)
{
    if (capacity < 8) {
        throw pst_error("PST '" + name + "': capacity " + std::to_string(capacity) + " is below 8");
    }
    _hash = make_table(name, capacity, sizeof(address), socket_id);
}

pst::pst(pst_index& shared, std::uint32_t owner, std::uint32_t capacity)
    : _hash(shared.table()), _owner(owner), _capacity(capacity)
{
    if (owner == 0) {
        throw pst_error("PST: a shared table's owner must not be 0");
    }
}

pst::~pst()
{
    // A shared table's rows stay until the table goes (pst_index): walking it
    // for one owner's rows would cost every other owner's too.
    if (owns_table()) {
        rte_hash_free(_hash);
    }
}

void pst::attach_rcu(rte_rcu_qsbr* qsbr)
{
    if (!owns_table()) {
        throw pst_error("PST: a shared table takes no RCU variable (its owners are one thread)");
    }
    rte_hash_rcu_config cfg{};
    cfg.v = qsbr;
    // Defer-queue mode: remove() never blocks; slots come back once readers
    // report quiescence. add() on a full table waits for one grace period and
    // retries (see add), so deletions are batched behind one wait.
    cfg.mode = RTE_HASH_QSBR_MODE_DQ;
    if (rte_hash_rcu_qsbr_add(_hash, &cfg) != 0) {
        throw pst_error(std::string("PST: rte_hash_rcu_qsbr_add failed: ") + rte_strerror(rte_errno));
    }
    _rcu = qsbr;
}

void pst::add(const address& destination, std::uint32_t set)
{
    void* data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(set));
    const bool replaces = find(destination).has_value();
    if (!replaces && _owner != 0 && size() >= _capacity) {
        // A shared table has room for the others' rows too: hold to our share.
        throw pst_error("PST: cannot add " + destination.to_string() + ": table full (capacity " +
                        std::to_string(_capacity) + ")");
    }
    shared_key scratch;
    const void* key = key_of(destination, scratch);
    int rc = rte_hash_add_key_data(_hash, key, data);
    if (rc == -ENOSPC && _rcu != nullptr) {
        // Deleted slots may be waiting in the defer queue for readers to move
        // on: wait for that, then the retry reclaims them.
        rte_rcu_qsbr_synchronize(_rcu, RTE_QSBR_THRID_INVALID);
        rc = rte_hash_add_key_data(_hash, key, data);
    }
    if (rc != 0) {
        throw pst_error("PST: cannot add " + destination.to_string() + ": " +
                        (rc == -ENOSPC ? std::string("table full (capacity ") + std::to_string(_capacity) + ")"
                                       : std::string(rte_strerror(-rc))));
    }
    if (!replaces) {
        _size.fetch_add(1, std::memory_order_relaxed);
    }
}

bool pst::remove(const address& destination)
{
    shared_key scratch;
    const std::int32_t position = rte_hash_del_key(_hash, key_of(destination, scratch));
    if (position < 0) {
        return false;
    }
    _size.fetch_sub(1, std::memory_order_relaxed);
    if (_rcu == nullptr) {
        // Lock-free mode never frees a deleted slot by itself (a reader may
        // still be looking at it). With no reader but us, free it now.
        rte_hash_free_key_with_position(_hash, position);
    }
    return true;
}

std::optional<std::uint32_t> pst::find(const address& destination) const noexcept
{
    void* data = nullptr;
    shared_key scratch;
    if (rte_hash_lookup_data(_hash, key_of(destination, scratch), &data) < 0) {
        return std::nullopt;
    }
    return static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(data));
}

std::uint64_t pst::find_burst(const address* const* keys, unsigned count, std::uint32_t* sets) const noexcept
{
    if (_owner == 0) {
        return lookup_burst(_hash, reinterpret_cast<const void**>(const_cast<const address**>(keys)), count, sets);
    }
    shared_key scratch[max_burst];
    const void* shared_keys[max_burst];
    count = std::min(count, max_burst);
    for (unsigned i = 0; i < count; ++i) {
        shared_keys[i] = key_of(*keys[i], scratch[i]);
    }
    return lookup_burst(_hash, shared_keys, count, sets);
}

bool pst::iterate(const void** key, void** data, std::uint32_t* next) const noexcept
{
    return rte_hash_iterate(_hash, key, data, next) >= 0;
}



} // namespace laps::tables
