#pragma once
// Latency-weighted packet spraying: Alg. 1 of the paper, per packet.
//
// select() does, for one packet to one destination:
//   1. if a member's PIT entry changed since the last packet, rebuild the
//      cached distribution (weights by Eq. 1, via exp_table);
//   2. Alg. 1 lines 5-8: if a valid path is stale (now - time > 2 x realVal),
//      pick one stale path at random (the FPGA prototype probes at most one
//      per packet), double its realVal, reset its time, and report it so the
//      caller sends a probe;
//   3. draw a path from the distribution: a branch-free binary search over
//      16 running sums, O(log 16), no exp(), no division.
// Invalid paths weigh 0; with no valid path the choice is "no path".
// One selector per lcore or engine: it owns its random generator.

#include "common/rng.hpp"
#include "common/time.hpp"
#include "softmax/beta.hpp"
#include "softmax/exp_table.hpp"
#include "softmax/policy.hpp"
#include "tables/path_table.hpp"

#include <atomic>
#include <cstdint>

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
    bool probing = true; // Alg. 1 lines 5-8 (policies laps and fastest)
    std::uint64_t seed = 1;
};

class selector {
public:
    explicit selector(const selector_params& params) noexcept
        : _params(params), _rng(params.seed), _epoch(new_epoch())
    {
    }

    // `flow_hash` only matters to policy ecmp (one path per flow).
    choice select(tables::path_table& table, std::uint32_t set, time_ns now, std::uint32_t flow_hash = 0) noexcept;

    // Parts of select(), public for tests and for callers that need only one.
    // rebuild() updates only the slots that changed when it can (see
    // tables::selection_cache); full_rebuild() recomputes every weight.
    void rebuild(tables::path_table& table, std::uint32_t set) const noexcept;
    void full_rebuild(tables::path_table& table, std::uint32_t set) const noexcept;
    bool probe_stale(tables::path_table& table, std::uint32_t set, time_ns now, path_id& probed) noexcept;
    bool draw(const tables::path_set& set, path_id& chosen) noexcept;

    // Changing beta or the policy invalidates every cached distribution (epoch bump).
    void set_beta(const beta_params& beta) noexcept
    {
        _params.beta = beta;
        _epoch = new_epoch();
    }
    void set_policy(policy p) noexcept
    {
        _params.policy = p;
        _epoch = new_epoch();
    }
    const selector_params& params() const noexcept { return _params; }
    // Whether select() probes stale paths (Alg. 1 lines 5-8).
    bool probes() const noexcept
    {
        return _params.probing && (_params.policy == policy::laps || _params.policy == policy::fastest);
    }

    // Fixed-point scale of the best path's weight; a path whose weight rounds
    // to 0 at this scale (exp(-x) < 2^-24) is never chosen.
    static constexpr double weight_scale = exp_table::weight_one;

private:
    bool cache_current(const tables::path_set& s) const noexcept
    {
        return s.cache.built_version == s.version && s.cache.built_epoch == _epoch;
    }
    double beta_scale(const tables::path_set& s) const noexcept;
    // Weight of a path `delta_ns` slower (negative: faster) than the reference.
    std::uint32_t weight_of(time_ns delta_ns, double scale) const noexcept;
    // Stale times of the `changed` slots, then running sums, total and the
    // earliest stale time from the cached per-slot values.
    void finish(tables::path_table& table, std::uint32_t set, std::uint32_t changed) const noexcept;

    selector_params _params;
    common::rng _rng;
    exp_table _exp;
    // Unique across selectors, so a cache built by one selector (or with other
    // parameters) is never taken as current by another.
    static std::uint32_t new_epoch() noexcept
    {
        static std::atomic<std::uint32_t> next{1};
        return next.fetch_add(1, std::memory_order_relaxed);
    }
    std::uint32_t _epoch;
};

} // namespace laps::softmax
