#pragma once
// An instance's tables: the PST (destination -> path set, rte_hash with
// lock-free readers) and the PIT with its path sets, read and updated by all
// the instance's workers at once (docs/design.md §2.3, "tables are shared,
// flows are owned"). An engine built on its own (testbed hosts, dp tests) owns one of
// these and is its only thread.
//
// Publication (docs/pipeline.md "Shared tables"):
//   - workers never lock: PST lookups are rte_hash's lock-free reads, PIT and
//     set fields are atomics or written only while unreachable;
//   - the control plane (console, telemetry, reload: one thread at a time,
//     holding control_mutex()) edits here, then waits for a grace period
//     (rte_rcu_qsbr: every worker reports a quiescent state once per loop
//     iteration) before anything a worker could still hold is reused: a
//     deleted PST key's slot (rte_hash's RCU defer queue), a released set
//     index, a removed pid;
//   - per-worker state (flows of a deleted destination, selection caches) is
//     changed by each worker itself, through the app's control channel.
// Without an RCU variable (an engine's own tables) synchronize() is a no-op:
// the owner is the only thread.

#include "tables/address.hpp"
#include "tables/path_table.hpp"
#include "tables/pst.hpp"

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>

struct rte_rcu_qsbr;

namespace laps::tables {

struct shared_tables_options {
    std::string name = "laps";           // prefixes the PST's rte_hash name (unique in the process)
    std::uint32_t pst_capacity = 65536;  // destinations
    int socket_id = -1;                  // of the PST's rte_hash (SOCKET_ID_ANY: -1)
    pst_index* shared_pst = nullptr;     // set: the PST is pst_owner's rows of this table (tables/pst.hpp)
    std::uint32_t pst_owner = 0;
    path_table_options paths;
};

class shared_tables {
public:
    // Throws table_error or pst_error naming the row or the problem.
    shared_tables(const table_spec& spec, const shared_tables_options& options);
    shared_tables(const shared_tables&) = delete;
    shared_tables& operator=(const shared_tables&) = delete;

    // Data plane.
    path_table& paths() noexcept { return _paths; }
    const path_table& paths() const noexcept { return _paths; }
    const pst& destinations() const noexcept { return _pst; }

    // Control plane. Callers on several threads hold this around their edits
    // and around PST iteration (pst::for_each is not concurrent with writers).
    std::mutex& control_mutex() noexcept { return _mutex; }

    // Workers report quiescent states on `qsbr`; from now on deletions wait
    // for them (grace periods).
    void attach_rcu(rte_rcu_qsbr* qsbr);
    // Returns once every online worker has passed a quiescent state since the
    // call: whatever was published before is seen by all, and nothing
    // unpublished before is still held by any. No-op without RCU.
    void synchronize() noexcept;

    void add_path(const pit_row& row) { _paths.add_path(row); }
    void remove_path(path_id pid) { _paths.remove_path(pid); }
    bool set_valid(path_id pid, bool valid) noexcept { return _paths.set_valid(pid, valid); }
    bool set_base(path_id pid, time_ns base_ns) noexcept { return _paths.set_base(pid, base_ns); }

    // A destination in two steps, so that every worker can prepare for the
    // set (its selection cache) before any packet can find it:
    // reserve_destination() builds the set, publish_destination() adds it to
    // the PST. fabric_ipv4 0: the destination itself (IPv4). Both throw,
    // naming the problem, pst_error (the destination: already there, IPv6
    // without a fabric address, PST full) or table_error (its pids); a
    // failed publish releases the set.
    std::uint32_t reserve_destination(const address& destination, std::span<const path_id> pids,
                                      std::uint32_t fabric_ipv4, const std::string& name);
    void publish_destination(const address& destination, std::uint32_t set);
    // Out of the PST, its pids unlinked (their ACKs are dropped from now on);
    // the set stays readable until release_set(). Throws pst_error when the
    // destination is not in the PST.
    std::uint32_t unpublish_destination(const address& destination);
    // After every worker tore down its flows of the set: waits for a grace
    // period, then frees the index.
    void release_set(std::uint32_t set) noexcept;

private:
    path_table _paths;
    pst _pst;
    std::mutex _mutex;
    rte_rcu_qsbr* _rcu = nullptr;
};

} // namespace laps::tables
