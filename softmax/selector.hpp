#pragma once
// Latency-weighted packet spraying: Alg. 1 of the paper, per packet.
//
// select() does, for one packet to one destination:
//   1. if the set's version moved since this selector last built its
//      distribution, recompute the weights (Eq. 1, via exp_table) of the
//      members whose PIT entry changed: the one the set names when it moved
//      by one version (the usual case: one ACK since the last packet), else
//      those whose values differ from what the cache was built from;
//   2. Alg. 1 lines 5-8: if a valid path is stale (now - time > 2 x realVal),
//      pick one stale path at random (the FPGA prototype probes at most one
//      per packet), double its realVal, reset its time, and report it so the
//      caller sends a probe;
//   3. draw a path from the distribution: a branch-free binary search over
//      16 running sums, O(log 16), no exp(), no division.
// Invalid paths weigh 0; with no valid path the choice is "no path".
//
// One selector per worker (or engine): it owns its random generator and its
// distributions (selection_cache, one per path set), while the PIT it reads
// is the instance's, shared by all workers. So every worker sees every ACK's
// measurement, and none writes anything shared to draw a path.

#include "common/rng.hpp"
#include "common/time.hpp"
#include "softmax/beta.hpp"
#include "softmax/exp_table.hpp"
#include "softmax/policy.hpp"
#include "policy/reps.hpp"
#include "tables/path_table.hpp"

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <vector>

namespace laps::softmax {

using common::time_ns;
using tables::path_id;

struct choice {
    bool has_path = false;
    bool has_probe = false;
    path_id path = 0;  // where to send the packet
    path_id probe = 0; // a stale path to probe (Alg. 1 line 6)
};

struct selector_params {
    softmax::policy policy = softmax::policy::laps;
    beta_params beta;
    bool probing = true; // Alg. 1 lines 5-8 (policies laps, fastest, selective)
    std::uint64_t seed = 1;
    // Policy reps: one REPS state per path set (entropies are the set's slots).
    std::uint16_t reps_cache_size = 8;
    time_ns reps_freeze_ns = 1'000'000;
};

// One selector's distribution for one path set, with what it was built from.
struct selection_cache {
    std::uint32_t built_version = std::numeric_limits<std::uint32_t>::max();
    std::uint32_t built_epoch = 0; // selector parameters it was built with
    std::uint32_t total = 0;       // 0: no valid path
    std::uint16_t seen_valid = 0;  // bit per slot
    // Running sums of fixed-point weights, padded with `total` up to 16 so a
    // branch-free binary search can run over all 16 entries.
    std::array<std::uint32_t, tables::max_paths_per_destination> cumulative{};
    // Earliest time one of the valid paths becomes stale (Alg. 1 line 5):
    // min over valid paths of measured_at + 2 * realVal. Tracked only by a
    // selector that probes (never otherwise).
    time_ns stale_at = std::numeric_limits<time_ns>::max();
    // Incremental updates: each slot's weight exp(-beta (realVal - reference))
    // in fixed point, so that an ACK that moves one path's latency recomputes
    // one weight, not k. `floor_ns`: below it a weight could overflow, and a
    // full rebuild takes a new reference.
    std::array<std::uint32_t, tables::max_paths_per_destination> weights{};
    // Per slot, the PIT values the weights were built from: a version change
    // recomputes only the slots whose values differ; and when the path
    // becomes stale (time max when invalid).
    std::array<time_ns, tables::max_paths_per_destination> seen_real{};
    std::array<time_ns, tables::max_paths_per_destination> seen_time{};
    std::array<time_ns, tables::max_paths_per_destination> stale{};
    time_ns reference_ns = 0;
    time_ns floor_ns = 0;
    double scale = 0.0; // beta in fixed-point table steps per ns
    // The selection quantum: a weight is recomputed only when its path's
    // realVal moved more than quantum_ns from the value the weight was
    // computed from (weighted_real), i.e. beta x change > 1/64. Every weight
    // is then within exp(+-1/64) of Eq. 1's on the PIT's current values and
    // every path's share within exp(+-1/32), about 3.2% of itself
    // (docs/pipeline.md "Selection quantum"). Validity changes always count.
    time_ns quantum_ns = 0;
    std::uint16_t weighted_valid = 0; // bit per slot: its weight is a valid path's
    std::array<time_ns, tables::max_paths_per_destination> weighted_real{};
};

// Log-weight change below which select() keeps a cached weight (1/64).
inline constexpr double selection_quantum = 1.0 / 64.0;

class selector {
public:
    // `sets`: caches for set indices below it (grow with prepare()).
    explicit selector(const selector_params& params, std::size_t sets = 0,
                      std::pmr::memory_resource* memory = std::pmr::get_default_resource())
        : _params(params), _probes(probing_policy(params)), _rng(params.seed), _epoch(new_epoch()), _caches(sets, memory),
          _reps(sets, laps::policy::reps(reps_config()), memory)
    {
    }

    // `flow_hash` only matters to policy ecmp (one path per flow). `set` must
    // have a cache (below the `sets` given, or prepared).
    choice select(tables::path_table& table, std::uint32_t set, time_ns now, std::uint32_t flow_hash = 0) noexcept;

    // Control plane: a new (or reused) set index gets a fresh cache. Between
    // bursts: it may allocate.
    void prepare(std::uint32_t set)
    {
        if (set >= _caches.size()) {
            _caches.resize(set + 1);
            _reps.resize(set + 1, laps::policy::reps(reps_config()));
        }
        _caches[set] = selection_cache{};
        _reps[set] = laps::policy::reps(reps_config());
    }

    // Policy reps (seed 001, Algorithm 1), per path set: the packet's path
    // from the set's entropy cache (an entropy is a slot of the set; an
    // unusable slot passes to the next usable one); an ACK's slot and ECN
    // echo; a timeout on the set (the freeze).
    choice select_reps(const tables::path_table& table, std::uint32_t set, time_ns now) noexcept;
    void reps_ack(std::uint32_t set, std::uint8_t slot, bool ecn_marked) noexcept
    {
        _reps[set].on_ack(slot, ecn_marked);
    }
    void reps_timeout(std::uint32_t set, time_ns now) noexcept { _reps[set].on_timeout(now); }
    const laps::policy::reps& reps_state(std::uint32_t set) const noexcept { return _reps[set]; }
    std::size_t cached_sets() const noexcept { return _caches.size(); }

    // Parts of select(), public for tests and for callers that need only one.
    // rebuild() updates only the slots that changed when it can;
    // full_rebuild() recomputes every weight.
    void rebuild(const tables::path_table& table, std::uint32_t set) noexcept;
    void full_rebuild(const tables::path_table& table, std::uint32_t set) noexcept;
    bool probe_stale(tables::path_table& table, std::uint32_t set, time_ns now, path_id& probed) noexcept;
    bool draw(const tables::path_table& table, std::uint32_t set, path_id& chosen) noexcept;
    const selection_cache& cache(std::uint32_t set) const noexcept { return _caches[set]; }
    selection_cache& cache(std::uint32_t set) noexcept { return _caches[set]; }

    // Changing beta or the policy invalidates every cached distribution (epoch bump).
    void set_beta(const beta_params& beta) noexcept
    {
        _params.beta = beta;
        _epoch = new_epoch();
    }
    void set_policy(softmax::policy p) noexcept
    {
        _params.policy = p;
        _probes = probing_policy(_params);
        _epoch = new_epoch();
    }
    const selector_params& params() const noexcept { return _params; }
    // Whether select() probes stale paths (Alg. 1 lines 5-8). Kept in a
    // flag: the per-packet update asks it.
    bool probes() const noexcept { return _probes; }
    // Whether probe answers may update the PIT: Alg. 1's, or Hopper's own probes.
    bool takes_probe_answers() const noexcept { return probes() || _params.policy == policy::hopper; }

    // Fixed-point scale of the best path's weight; a path whose weight rounds
    // to 0 at this scale (exp(-x) < 2^-24) is never chosen.
    static constexpr double weight_scale = exp_table::weight_one;

private:
    double beta_scale(const tables::path_set& s) const noexcept;
    // Weight of a path `delta_ns` slower (negative: faster) than the reference.
    std::uint32_t weight_of(time_ns delta_ns, double scale) const noexcept;
    // Running sums, total and the earliest stale time from the cached
    // per-slot values; marks the cache built at `version`.
    void finish(const tables::path_set& s, selection_cache& c, std::uint32_t version) const noexcept;
    // Reads member `slot`'s entry into the cache's seen_* fields; returns its
    // bit when its values differ from what the cache had.
    // `with_time`: also the entry's time and the slot's staleness (only
    // Alg. 1's probing needs them).
    template <bool with_time>
    static std::uint32_t observe_slot(const tables::path_table& table, const tables::path_set& s,
                                      selection_cache& c, std::size_t slot) noexcept;
    static std::uint32_t observe(const tables::path_table& table, const tables::path_set& s,
                                 selection_cache& c, bool with_time) noexcept;
    // Every slot then reads as changed to observe().
    static void forget_seen(selection_cache& c) noexcept
    {
        c.seen_valid = 0;
        c.seen_real.fill(-1);
    }
    // The earliest time a valid path goes stale (never without probing).
    time_ns earliest_stale(const tables::path_set& s, const selection_cache& c) const noexcept;
    void compute_all(const tables::path_set& s, selection_cache& c, std::uint32_t version) const noexcept;
    // New weights for the `changed` slots (already observed), or all of them
    // when the cache cannot be updated in place.
    void apply(const tables::path_set& s, selection_cache& c, std::uint32_t version, std::uint32_t changed) const noexcept;
    // Brings set `set`'s cache up to date with the table, reading as few
    // entries as the set's change word allows.
    void update(const tables::path_table& table, const tables::path_set& s, selection_cache& c,
                std::uint64_t change) noexcept;
    template <bool with_time>
    void update_from(const tables::path_table& table, const tables::path_set& s, selection_cache& c,
                     std::uint64_t change) noexcept;
    // The per-packet check: is set `s`'s cache current? (Inline: most packets stop here.)
    void refresh(const tables::path_table& table, const tables::path_set& s, selection_cache& c) noexcept
    {
        const std::uint64_t change = s.change.load(std::memory_order_acquire);
        if (static_cast<std::uint32_t>(change >> 32) != c.built_version || c.built_epoch != _epoch) {
            update(table, s, c, change);
        }
    }
    bool draw_from(const tables::path_set& s, const selection_cache& c, path_id& chosen) noexcept;

    static bool probing_policy(const selector_params& p) noexcept
    {
        return p.probing && (p.policy == policy::laps || p.policy == policy::fastest || p.policy == policy::selective);
    }

    selector_params _params;
    bool _probes;
    common::rng _rng;
    const exp_table* _exp = &exp_table::shared();
    // Unique across selectors, so a cache built with other parameters is
    // never taken as current.
    static std::uint32_t new_epoch() noexcept
    {
        static std::atomic<std::uint32_t> next{1};
        return next.fetch_add(1, std::memory_order_relaxed);
    }
    laps::policy::reps_config reps_config() const noexcept
    {
        laps::policy::reps_config c;
        c.entropies = tables::max_paths_per_destination;
        c.cache_size = _params.reps_cache_size;
        c.explore_packets = ~std::uint32_t{0}; // every slot once, then recycle (Alg. 1 line 6)
        c.freeze_ns = _params.reps_freeze_ns;
        return c;
    }

    std::uint32_t _epoch;
    std::pmr::vector<selection_cache> _caches;
    std::pmr::vector<laps::policy::reps> _reps;
};

} // namespace laps::softmax
