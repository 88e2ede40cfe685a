#pragma once
// The PIT together with its per-destination path sets: what one instance
// knows about its paths, shared by all its workers.
//
// A path set is the PST's value (paper Fig. 4: DstIP -> pids). Each pid serves
// exactly one set, so an ACK finds its set from its pid (no PST lookup on the
// ACK path), and every change to a member's PIT entry bumps its set's
// `version`: a selector (one per worker, softmax/selector.hpp) recomputes its
// cached distribution of a set only when the version moved, so no packet ever
// calls exp().
//
// Concurrency (docs/pipeline.md "Shared tables"): data-plane calls
// (record_latency, mark_probed, the readers) may run on every worker at once;
// control-plane calls (add_*, remove_path, release_set, set_valid) run on one
// thread at a time, and whoever calls them keeps readers safe: a set index is
// released, and a pid removed, only after every worker has passed a quiescent
// state since the set was unlinked (tables::shared_tables does this with
// rte_rcu_qsbr; an engine that owns its table is its only thread).

#include "common/time.hpp"
#include "tables/clock_offset.hpp"
#include "tables/pit.hpp"
#include "tables/table_spec.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace laps::tables {

struct alignas(64) path_set {
    // Control plane: written before the set is published (PST add), then
    // read-only until it is released.
    std::array<path_id, max_paths_per_destination> pids{};
    std::uint8_t count = 0;
    std::uint8_t max_anchors = 0; // most anchors of any member: the set's largest header
    bool live = false;            // false once released (its index may be reused)
    std::uint32_t fabric_ipv4 = 0; // the outer destination, host order
    // max baseVal over all members: the normalised beta's denominator.
    time_ns max_base_ns = 0;
    // T of Alg. 2, max baseVal over the valid members (0 when none is valid);
    // kept up to date by set_valid so ACKs need not scan for it.
    std::atomic<time_ns> max_base_valid_ns{0};

    // Data plane, on lines of their own. `change` = version << 32 | the slots
    // of the last four changes, one per byte, newest in the low byte
    // (any_slot: the set itself changed). The version is bumped (release)
    // after every change of a member's entry. A selector that built its cache
    // at version v and finds v + d, d <= 4, re-reads the d entries named;
    // further behind, all of them.
    alignas(64) std::atomic<std::uint64_t> change{0};
    // Receiver clock minus sender clock for this destination (docs/design.md §3.7):
    // tables/clock_offset.hpp.
    clock_offset_state clock_offset;

    static constexpr std::uint8_t any_slot = 0xff;
    static constexpr std::uint32_t change_history = 4;
    std::span<const path_id> members() const noexcept { return {pids.data(), count}; }
    std::uint32_t current_version() const noexcept
    {
        return static_cast<std::uint32_t>(change.load(std::memory_order_acquire) >> 32);
    }
    // A reader that saw version `since` and now acquired `word`: calls
    // `visit(slot)` for each slot the changes in between name (newest first,
    // a slot may come twice) while it returns true. False when they are not
    // known (more than change_history behind, never seen, or the set itself
    // changed) or `visit` stopped: the reader reads every member again.
    template <typename Visit>
    bool for_each_change(std::uint64_t word, std::uint32_t since, Visit&& visit) const noexcept
    {
        const std::uint32_t behind = static_cast<std::uint32_t>(word >> 32) - since;
        if (since == std::numeric_limits<std::uint32_t>::max() || behind > change_history) {
            return false;
        }
        for (std::uint32_t d = 0; d < behind; ++d) { // usually once: one ACK since the last look
            const auto slot = static_cast<std::uint8_t>(word >> (8 * d));
            if (slot >= count || !visit(slot)) {
                return false;
            }
        }
        return true;
    }
};
static_assert(sizeof(path_set) == 192, "a control line and two data-plane lines");

// One reader's copy of t (Alg. 2 line 5) for one path set, kept up to date
// from the set's change word: an ACK re-reads only the entries the word
// names (usually the one it just wrote), not all k. See
// path_table::min_real_valid.
struct set_minimum {
    static constexpr std::uint8_t none = 0xff;
    std::uint32_t version = std::numeric_limits<std::uint32_t>::max(); // built at (max: never)
    bool only_fresh = false;
    bool from_fresh = false;     // the minimum is over fresh members (else over all usable ones)
    std::uint8_t slot = none;    // the member that holds it (none: no usable member)
    time_ns real = std::numeric_limits<time_ns>::max();
    time_ns stale_at = std::numeric_limits<time_ns>::max(); // from_fresh: when that member goes stale
    time_ns seen_at = std::numeric_limits<time_ns>::max();  // the latest `now` it was valid for
};

// A configuration problem found while building tables: says which row.
class table_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct path_table_options {
    std::size_t pit_capacity = 65536;
    // Destinations at most (set indices).
    std::size_t set_capacity = 65536;
    // false: trust measured latencies as absolute (clocks synchronised, e.g. PTP).
    // true: remove a per-destination clock offset estimate (docs/design.md §3.7).
    bool estimate_clock_offset = true;
    clock_offset_params clock;
    // Alg. 1's doubling of realVal stops here (a stale path is then probed
    // at least every 2 x this); measured values above it are kept.
    time_ns probe_backoff_cap_ns = 10 * common::ns_per_ms;
    // Size normalisation of samples (a probe crosses each link faster than
    // the full frame baseVal assumes): the frame size uncongested_ns was
    // computed for, and the serialisation per byte per link, in ps, at the
    // rate links are assumed to have (the NIC's: 80 ps at 100 Gb/s).
    // 0: samples are not normalised.
    std::uint32_t reference_frame_bytes = 1024;
    std::uint32_t link_ps_per_byte = 0;
    // How far a measurement may move realVal before the entry is rewritten,
    // as a fraction of realVal; time is refreshed when older than 8 x this
    // fraction of realVal. 0: every ACK rewrites (the paper). Shared tables
    // use a small tolerance so that ACKs on many workers do not bounce the
    // entry's cache line between cores on every packet (docs/pipeline.md).
    double update_tolerance = 0.0;
    // Where the entries live (the worker's socket, hugepages: app/run/memory.hpp).
    std::pmr::memory_resource* memory = std::pmr::get_default_resource();
};

class path_table {
public:
    // Builds sets in PST row order (set index == row index). Throws table_error
    // naming the row for: pid out of range, pid without a PIT row, pid used by
    // two destinations, too many pids, duplicate PIT rows, bad anchors/delays.
    path_table(const table_spec& spec, const path_table_options& options);
    ~path_table();
    path_table(const path_table&) = delete;
    path_table& operator=(const path_table&) = delete;
    path_table(path_table&&) noexcept;

    const pit& paths() const noexcept { return _pit; }
    const path_entry& path(path_id pid) const noexcept { return _pit[pid]; }
    bool contains(path_id pid) const noexcept { return _pit.contains(pid); }

    // Set indices ever used (a per-worker cache needs this many entries).
    std::size_t set_count() const noexcept { return _set_count; }
    std::size_t set_capacity() const noexcept { return _set_capacity; }
    double update_tolerance() const noexcept { return static_cast<double>(_tolerance_1024) / 1024.0; }
    const path_set& set(std::uint32_t index) const noexcept
    {
        return _chunks[index / set_chunk][index % set_chunk];
    }

    // Data plane: an ACK or PROBE_ACK reports `raw_latency_ns` (receiver clock
    // at arrival minus sender clock at departure) for `pid` at `now`.
    // One measurement as an ACK brings it: the round trip gives the
    // estimator a lower bound of the offset (tables/clock_offset.hpp).
    struct latency_sample {
        time_ns raw_ns = 0;
        std::uint32_t frame_bytes = 0;  // the measured packet's size (0: the reference frame)
        time_ns rtt_ns = -1;            // its round trip (< 0: unknown, e.g. it was resent)
        std::uint32_t answer_bytes = 0; // the size of the ACK that carried the sample
    };
    // Updates realVal and time (Alg. 2 lines 1-2), within the update
    // tolerance, and returns the pid's set (no_set, and nothing changed, when
    // the pid serves no destination). `frame_bytes`: the measured packet's
    // size as it arrived (0: unknown, taken as the reference size);
    // `events`: clock_offset_event bits of what the estimator did. A
    // latency above `max_real` once the offset is removed is implausible:
    // the estimator has seen it (a clock step shows so until confirmed) but
    // the entry is not written (offset_implausible).
    std::uint32_t record_latency(path_id pid, time_ns raw_latency_ns, time_ns now, std::uint32_t frame_bytes = 0,
                                 std::uint8_t* events = nullptr, time_ns max_real = max_real_ns) noexcept
    {
        return record_latency(pid, latency_sample{raw_latency_ns, frame_bytes}, now, events, max_real);
    }
    // With the round trip: a lower bound of the offset too.
    // `recorded`: where to put the latency realVal was given (clock offset
    // removed, before the update tolerance), 0 when none was.
    std::uint32_t record_latency(path_id pid, const latency_sample& sample, time_ns now, std::uint8_t* events = nullptr,
                                 time_ns max_real = max_real_ns, time_ns* recorded = nullptr) noexcept;
    // The set's current clock offset estimate (none before a sample).
    time_ns clock_offset(std::uint32_t set, time_ns now) const noexcept { return this->set(set).clock_offset.predict(now); }
    const clock_offset_params& clock_params() const noexcept { return _clock; }

    // Data plane: Alg. 1 lines 7-8, doubles realVal and resets time, if the
    // entry's time is still `seen_time` (another worker may have probed or
    // measured it meanwhile: then nothing changes and the result is false).
    bool mark_probed(path_id pid, time_ns now, time_ns seen_time) noexcept;
    bool mark_probed(path_id pid, time_ns now) noexcept { return mark_probed(pid, now, path(pid).time()); }

    // Control plane: a path goes down or comes back (console `path <pid> up|down`).
    // Returns whether it changed.
    bool set_valid(path_id pid, bool valid) noexcept;
    // Control plane: a path's baseVal from what it measures (app
    // tables.calibrate_base, docs/app.md "A baseline that matches the
    // ports"). The data plane reads baseVal only through T
    // (max_base_valid_ns, refreshed here); `base_ns` itself is read by the
    // control plane only. Returns whether it changed.
    bool set_base(path_id pid, time_ns base_ns) noexcept;

    // Control plane edits (console `pit add|del`, `pst add|del`). They throw
    // table_error naming the problem and change nothing when they do.
    void add_path(const pit_row& row);
    // Only a pid that serves no destination can go.
    void remove_path(path_id pid);
    // A new destination's path set: returns its index (a released index is
    // reused first). Its pids are linked to it at once. `name` is for messages.
    std::uint32_t add_set(std::span<const path_id> pids, const std::string& name, std::uint32_t fabric_ipv4 = 0);
    // The set's pids serve no destination any more (ACKs for them are
    // dropped from now on); the set itself stays readable for flows that
    // still use it.
    void unlink_set(std::uint32_t set) noexcept;
    // Its index becomes free: only after unlink_set and once no reader can
    // hold it (every worker passed a quiescent state, and none has a flow on it).
    void release_set(std::uint32_t set) noexcept;

    // Alg. 2 lines 4-5 over the valid members of a set. T: max baseVal.
    time_ns max_base_valid(std::uint32_t set) const noexcept
    {
        return this->set(set).max_base_valid_ns.load(std::memory_order_relaxed);
    }
    // t: min realVal over the valid members (Alg. 2 line 5). With
    // `only_fresh`, over those measured within their staleness window (now -
    // time <= 2 x realVal, Alg. 1's rule), or all valid ones when none is:
    // for callers that do not probe, where a path nobody measures (policy
    // ecmp) keeps its initial realVal = baseVal, which would hold t <= T and
    // hide congestion forever. With probing, stale paths get probed and their
    // realVal doubled, as the paper has it, so all count.
    time_ns min_real_valid(std::uint32_t set, time_ns now, bool only_fresh) const noexcept;
    // The same from a reader's cache of it (the engine keeps one per set):
    // the members the change word names since the cache was built are read
    // again, the others only when the minimum itself moved up, went stale
    // or the word fell more than change_history versions behind. Returns
    // exactly what the rescan returns.
    time_ns min_real_valid(std::uint32_t set, time_ns now, bool only_fresh, set_minimum& cache) const noexcept;

    // The fair rate control's signal (congestion/aimd.hpp): the smallest
    // queueing delay over the valid members measured within their staleness
    // window, a member's queueing delay being realVal minus its uncongested
    // delay (not its baseVal: the margin grows with the path's length, the
    // queue at a shared bottleneck is the same for every flow). A stale
    // member does not count: Alg. 1 doubles its realVal to steer packets
    // away, which measures no queue. no_queue when no member is fresh.
    static constexpr time_ns no_queue = std::numeric_limits<time_ns>::max();
    time_ns min_queue_fresh(std::uint32_t set, time_ns now) const noexcept;

private:
    // The path's uncongested delay for a frame of `frame_bytes` (0: the reference frame).
    time_ns uncongested_for(const path_entry& e, std::uint32_t frame_bytes) const noexcept;
    static constexpr std::size_t set_chunk = 64;
    path_set& mutable_set(std::uint32_t index) noexcept { return _chunks[index / set_chunk][index % set_chunk]; }
    void bump(std::uint32_t set, std::uint8_t slot) noexcept { bump(mutable_set(set), slot); }
    static void bump(path_set& s, std::uint8_t slot) noexcept
    {
        auto& change = s.change;
        std::uint64_t current = change.load(std::memory_order_relaxed);
        std::uint64_t next;
        do {
            const std::uint64_t version = (current >> 32) + 1;
            const std::uint64_t history = ((current & 0xffffffu) << 8) | slot;
            next = (version << 32) | history;
        } while (!change.compare_exchange_weak(current, next, std::memory_order_release, std::memory_order_relaxed));
    }
    void refresh_max_base_valid(std::uint32_t set) noexcept;
    // min_real_valid's full scan, into `cache`.
    void scan_minimum(const path_set& s, time_ns now, bool only_fresh, set_minimum& cache) const noexcept;
    void free_chunks() noexcept;

    pit _pit;
    std::pmr::memory_resource* _memory;
    std::size_t _set_capacity;
    // Sets in chunks allocated as destinations are added, never moved: a
    // reader's reference stays valid while the control plane adds sets.
    std::pmr::vector<path_set*> _chunks;
    std::size_t _set_count = 0;
    std::vector<std::uint32_t> _free_sets;
    bool _estimate_clock_offset;
    clock_offset_params _clock;
    time_ns _probe_backoff_cap_ns;
    std::uint32_t _reference_frame_bytes;
    std::uint32_t _link_ps_per_byte;
    // update_tolerance in 1/1024 of realVal (0: every measurement is written).
    time_ns _tolerance_1024 = 0;
};

} // namespace laps::tables
