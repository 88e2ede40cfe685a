#pragma once
// The PIT together with its per-destination path sets: what one engine shard
// knows about its paths.
//
// A path set is the PST's value (paper Fig. 4: DstIP -> pids) plus what the
// selector caches about it. Each pid serves exactly one set, so an ACK finds
// its set from its pid (no PST lookup on the ACK path), and every change to a
// PIT entry bumps its set's `version`: the selector recomputes a set's
// distribution only when the version moved, so no packet ever calls exp().

#include "common/time.hpp"
#include "tables/pit.hpp"
#include "tables/table_spec.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace laps::tables {

// A selection distribution, filled by softmax::selector and cached here so it
// lives next to the set it describes.
struct selection_cache {
    std::uint32_t built_version = std::numeric_limits<std::uint32_t>::max();
    std::uint32_t built_epoch = 0; // selector parameters it was built with
    std::uint32_t total = 0;       // 0: no valid path
    // Running sums of fixed-point weights, padded with `total` up to 16 so a
    // branch-free binary search can run over all 16 entries.
    std::array<std::uint32_t, max_paths_per_destination> cumulative{};
    // Earliest time one of the valid paths becomes stale (Alg. 1 line 5):
    // min over valid paths of measured_at + 2 * realVal.
    time_ns stale_at = std::numeric_limits<time_ns>::max();
    // Incremental updates: each slot's weight exp(-beta (realVal - reference))
    // in fixed point, so that an ACK that moves one path's latency recomputes
    // one weight, not k. `floor_ns`: below it a weight could overflow, and a
    // full rebuild takes a new reference.
    std::array<std::uint32_t, max_paths_per_destination> weights{};
    // Per slot: when the path becomes stale (time max when invalid).
    std::array<time_ns, max_paths_per_destination> stale{};
    time_ns reference_ns = 0;
    time_ns floor_ns = 0;
    double scale = 0.0; // beta in fixed-point table steps per ns
};

struct path_set {
    std::array<path_id, max_paths_per_destination> pids{};
    std::uint8_t count = 0;
    std::uint32_t version = 0; // bumped by every change of a member's PIT entry
    std::uint16_t dirty = 0;   // slots changed since the selector last looked
    // max baseVal over all members: the normalised beta's denominator.
    time_ns max_base_ns = 0;
    // T of Alg. 2, max baseVal over the valid members (0 when none is valid);
    // kept up to date by path_table::set_valid so ACKs need not scan for it.
    time_ns max_base_valid_ns = 0;
    // Receiver clock minus sender clock, estimated as the smallest
    // (measured latency - uncongested delay) seen on any member path.
    time_ns clock_offset_ns = std::numeric_limits<time_ns>::max();
    selection_cache cache;

    std::span<const path_id> members() const noexcept { return {pids.data(), count}; }
    bool live = true; // false once released (its index may be reused)
};

// A configuration problem found while building tables: says which row.
class table_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct path_table_options {
    std::size_t pit_capacity = 65536;
    // false: trust measured latencies as absolute (clocks synchronised, e.g. PTP).
    // true: remove a per-destination clock offset estimate (DESIGN §3).
    bool estimate_clock_offset = true;
};

class path_table {
public:
    // Builds sets in PST row order (set index == row index). Throws table_error
    // naming the row for: pid out of range, pid without a PIT row, pid used by
    // two destinations, too many pids, duplicate PIT rows, bad anchors/delays.
    path_table(const table_spec& spec, const path_table_options& options);

    const pit& paths() const noexcept { return _pit; }
    const path_entry& path(path_id pid) const noexcept { return _pit[pid]; }
    bool contains(path_id pid) const noexcept { return _pit.contains(pid); }

    std::size_t set_count() const noexcept { return _sets.size(); }
    path_set& set(std::uint32_t index) noexcept { return _sets[index]; }
    const path_set& set(std::uint32_t index) const noexcept { return _sets[index]; }

    // Data plane: an ACK or PROBE_ACK reports `raw_latency_ns` (receiver clock
    // at arrival minus sender clock at departure) for `pid` at `now`.
    // Updates realVal and time (Alg. 2 lines 1-2) and returns the pid's set
    // (no_set, and nothing changed, when the pid serves no destination).
    std::uint32_t record_latency(path_id pid, time_ns raw_latency_ns, time_ns now) noexcept;

    // Data plane: Alg. 1 lines 7-8, after a probe was sent on `pid`.
    void mark_probed(path_id pid, time_ns now) noexcept;

    // Control plane: a path goes down or comes back (console `path <pid> up|down`).
    void set_valid(path_id pid, bool valid) noexcept;

    // Control plane edits (console `pit add|del`, `pst add|del`). They throw
    // table_error naming the problem and change nothing when they do.
    void add_path(const pit_row& row);
    // Only a pid that serves no destination can go.
    void remove_path(path_id pid);
    // A new destination's path set: returns its index (a released index is
    // reused first). `name` is for messages.
    std::uint32_t add_set(std::span<const path_id> pids, const std::string& name);
    // The set's pids serve no destination any more; its index becomes free.
    void release_set(std::uint32_t set) noexcept;

    // Alg. 2 lines 4-5 over the valid members of a set. T: max baseVal.
    time_ns max_base_valid(std::uint32_t set) const noexcept { return _sets[set].max_base_valid_ns; }
    // t: min realVal over the valid members (Alg. 2 line 5). With
    // `only_fresh`, over those measured within their staleness window (now -
    // time <= 2 x realVal, Alg. 1's rule), or all valid ones when none is:
    // for callers that do not probe, where a path nobody measures (policy
    // ecmp) keeps its initial realVal = baseVal, which would hold t <= T and
    // hide congestion forever. With probing, stale paths get probed and their
    // realVal doubled, as the paper has it, so all count.
    time_ns min_real_valid(std::uint32_t set, time_ns now, bool only_fresh) const noexcept;

private:
    void bump(path_id pid) noexcept
    {
        auto& s = _sets[_pit[pid].set];
        ++s.version;
        s.dirty = static_cast<std::uint16_t>(s.dirty | (1u << _pit[pid].slot));
    }
    void refresh_max_base_valid(std::uint32_t set) noexcept;

    pit _pit;
    std::vector<path_set> _sets;
    std::vector<std::uint32_t> _free_sets;
    bool _estimate_clock_offset;
};

} // namespace laps::tables
