#pragma once
// PIT, the Path Information Table (paper §III-C, Fig. 4): pid -> path state.
//
// Dense and indexed by pid, because pids are small per-host integers (16 bits
// on the wire) and every data packet and ACK touches k entries: an array index
// beats any hash.
//
// One PIT per instance, shared by all its workers (docs/design.md §2.3): every ACK a
// worker takes updates the one entry of its path, whichever worker sent the
// DATA. Who writes what (docs/pipeline.md "Shared tables"):
//
//   control plane (one writer at a time: the engine that owns the table, or
//   the instance's control lcore): the static fields, while the entry serves
//   no destination (`set` is no_set, or `present` false), then published by
//   a release store of `set`; `valid` at any time (console `path N down`),
//   followed by a version bump of the set.
//   data plane (any worker): `real_ns` and `measured_at`, relaxed stores,
//   followed by a version bump of the set (release) that readers acquire.
//
// One entry per 64-byte line: a write to one path never invalidates another.

#include "common/time.hpp"
#include "tables/table_spec.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <vector>

namespace laps::tables {

using common::time_ns;

inline constexpr std::uint32_t no_set = std::numeric_limits<std::uint32_t>::max();
// The largest realVal an entry holds (about 39 hours, far above any
// plausible latency): realVal is also a time interval, and time + 2 x
// realVal must fit in a time_ns for any time a run can reach.
inline constexpr time_ns max_real_ns = time_ns{1} << 47;

// The data path relies on these being plain loads and stores (as grout checks
// its shared worker state): no hidden lock on any target we build for.
static_assert(std::atomic<time_ns>::is_always_lock_free);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free); // a path set's change word
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(std::atomic<bool>::is_always_lock_free);

struct alignas(64) path_entry {
    // Control plane.
    std::atomic<bool> present{false}; // a row was configured for this pid (release by add_path)
    std::atomic<bool> valid{false};   // usable for new packets (a failed path is invalid)
    std::uint8_t hop_count = 0;
    std::uint8_t anchor_count = 0;
    std::uint8_t slot = 0;            // position of this pid in its set
    std::atomic<std::uint32_t> set{no_set}; // the path set (destination) this pid serves
    // baseVal. Also rewritten while live by set_base (control plane), which
    // is safe because only the control plane reads it: the data plane reads
    // T, the set's max_base_valid_ns, refreshed by set_base.
    time_ns base_ns = 0;
    time_ns uncongested_ns = 0; // baseVal without the queueing margin
    std::array<std::uint32_t, max_anchors> anchors{};

    // Data plane (any worker of the instance).
    std::atomic<time_ns> measured_at{0}; // `time`: when realVal was last measured or probed
    std::atomic<time_ns> real_ns{0};     // `realVal`: latest one-way latency, clock offset removed

    bool usable() const noexcept { return valid.load(std::memory_order_relaxed); }
    time_ns real() const noexcept { return real_ns.load(std::memory_order_relaxed); }
    time_ns time() const noexcept { return measured_at.load(std::memory_order_relaxed); }
    // Acquire: the static fields written before the set was linked are visible.
    std::uint32_t set_index() const noexcept { return set.load(std::memory_order_acquire); }
};
static_assert(sizeof(path_entry) == 64, "one PIT entry per cache line");

class pit {
public:
    explicit pit(std::size_t capacity, std::pmr::memory_resource* memory = std::pmr::get_default_resource())
        : _entries(capacity, memory)
    {
    }

    std::size_t capacity() const noexcept { return _entries.size(); }
    bool contains(path_id pid) const noexcept
    {
        return pid < _entries.size() && _entries[pid].present.load(std::memory_order_acquire);
    }

    path_entry& operator[](path_id pid) noexcept { return _entries[pid]; }
    const path_entry& operator[](path_id pid) const noexcept { return _entries[pid]; }

private:
    std::pmr::vector<path_entry> _entries;
};

} // namespace laps::tables
