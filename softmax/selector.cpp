#include "softmax/selector.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace laps::softmax {

double selector::beta_scale(const tables::path_set& s) const noexcept
{
    // spray and ecmp ignore latency (beta 0: all valid paths weigh the same);
    // fastest is the limit of a huge beta.
    double beta = _params.beta.for_destination(s.max_base_ns);
    if (_params.policy == policy::spray || _params.policy == policy::ecmp) {
        beta = 0.0;
    } else if (_params.policy == policy::fastest) {
        beta = 1e3; // per ns: 0.04 ns of difference already gives weight 0
    }
    return beta * exp_table::fixed_per_unit;
}

std::uint32_t selector::weight_of(time_ns delta_ns, double scale) const noexcept
{
    const double x = static_cast<double>(delta_ns) * scale;
    if (x >= 0.0) {
        const double cap = static_cast<double>(exp_table::size) * 65536.0; // beyond: weight 0
        return _exp.weight(x < cap ? static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(cap));
    }
    return _exp.growth(static_cast<std::uint64_t>(-x));
}

void selector::finish(tables::path_table& table, std::uint32_t set_index, std::uint32_t changed) const noexcept
{
    auto& s = table.set(set_index);
    auto& c = s.cache;
    constexpr time_ns never = std::numeric_limits<time_ns>::max();
    for (std::uint32_t mask = changed; mask != 0; mask &= mask - 1) {
        const auto i = static_cast<std::size_t>(__builtin_ctz(mask));
        const auto& e = table.path(s.pids[i]);
        // measured_at + 2 realVal (realVal is at most 2^62 by mark_probed).
        const time_ns window = 2 * e.real_ns;
        c.stale[i] = !e.valid ? never : e.measured_at > never - window ? never : e.measured_at + window;
    }
    std::uint32_t running = 0;
    time_ns stale_at = never;
    std::size_t i = 0;
    for (; i < s.count; ++i) {
        running += c.weights[i];
        c.cumulative[i] = running;
        stale_at = std::min(stale_at, c.stale[i]);
    }
    for (; i < c.cumulative.size(); ++i) {
        c.cumulative[i] = running;
    }
    c.total = running;
    c.stale_at = stale_at;
    c.built_version = s.version;
    c.built_epoch = _epoch;
    s.dirty = 0;
}

void selector::full_rebuild(tables::path_table& table, std::uint32_t set_index) const noexcept
{
    auto& s = table.set(set_index);
    auto& c = s.cache;
    // The reference is the smallest latency: every weight is then in (0, 1]
    // and neither overflows nor loses the best path to underflow, for any
    // latency up to 2^62 ns.
    time_ns min_real = std::numeric_limits<time_ns>::max();
    for (std::size_t i = 0; i < s.count; ++i) {
        const auto& e = table.path(s.pids[i]);
        if (e.valid) {
            min_real = std::min(min_real, e.real_ns);
        }
    }
    c.scale = beta_scale(s);
    c.reference_ns = min_real;
    // Incremental updates may go this far below the reference (weights up to e^2).
    const double headroom = c.scale > 0.0 ? exp_table::growth_limit * exp_table::fixed_per_unit / c.scale : 0.0;
    c.floor_ns = headroom < static_cast<double>(min_real) ? min_real - static_cast<time_ns>(headroom)
                                                          : std::numeric_limits<time_ns>::min();
    for (std::size_t i = 0; i < s.count; ++i) {
        const auto& e = table.path(s.pids[i]);
        c.weights[i] = e.valid ? weight_of(e.real_ns - min_real, c.scale) : 0;
    }
    finish(table, set_index, (1u << s.count) - 1);
}

void selector::rebuild(tables::path_table& table, std::uint32_t set_index) const noexcept
{
    auto& s = table.set(set_index);
    auto& c = s.cache;
    const bool never_built = c.built_version == std::numeric_limits<std::uint32_t>::max() && c.total == 0;
    if (c.built_epoch != _epoch || never_built || s.dirty == 0) {
        full_rebuild(table, set_index);
        return;
    }
    std::uint32_t best = 0;
    bool any_valid = false;
    for (std::uint32_t mask = s.dirty; mask != 0; mask &= mask - 1) {
        const auto i = static_cast<std::size_t>(__builtin_ctz(mask));
        const auto& e = table.path(s.pids[i]);
        if (!e.valid) {
            c.weights[i] = 0;
            continue;
        }
        if (e.real_ns < c.floor_ns) {
            full_rebuild(table, set_index); // much faster than the reference
            return;
        }
        c.weights[i] = weight_of(e.real_ns - c.reference_ns, c.scale);
    }
    for (std::size_t i = 0; i < s.count; ++i) {
        best = std::max(best, c.weights[i]);
        any_valid = any_valid || table.path(s.pids[i]).valid;
    }
    // Every path far slower than the reference: weights lose precision (or
    // vanish); take the current minimum as the new reference.
    constexpr std::uint32_t precision_floor = 1u << 20;
    if (any_valid && best < precision_floor) {
        full_rebuild(table, set_index);
        return;
    }
    finish(table, set_index, s.dirty);
}

bool selector::probe_stale(tables::path_table& table, std::uint32_t set_index, time_ns now,
                           path_id& probed) noexcept
{
    const auto& s = table.set(set_index);
    if (now <= s.cache.stale_at) {
        return false;
    }
    // Reservoir-pick one stale path uniformly, without a temporary list.
    std::uint32_t stale_seen = 0;
    for (const path_id pid : s.members()) {
        const auto& e = table.path(pid);
        if (e.valid && now - e.measured_at > 2 * e.real_ns) {
            ++stale_seen;
            if (_rng.below(stale_seen) == 0) {
                probed = pid;
            }
        }
    }
    if (stale_seen == 0) {
        return false;
    }
    table.mark_probed(probed, now);
    return true;
}

bool selector::draw(const tables::path_set& s, path_id& chosen) noexcept
{
    const auto& c = s.cache;
    if (c.total == 0) {
        return false;
    }
    const auto r = static_cast<std::uint32_t>((static_cast<std::uint64_t>(_rng.next32()) * c.total) >> 32);
    // First index whose running sum exceeds r: count the sums <= r by a
    // branch-free binary search over the 16 padded entries.
    // Arithmetic on the comparison, not a branch: with several live paths
    // the outcome is random and a branch would mispredict half the time.
    std::size_t i = 0;
    i += static_cast<std::size_t>(c.cumulative[i + 7] <= r) * 8;
    i += static_cast<std::size_t>(c.cumulative[i + 3] <= r) * 4;
    i += static_cast<std::size_t>(c.cumulative[i + 1] <= r) * 2;
    i += static_cast<std::size_t>(c.cumulative[i] <= r);
    chosen = s.pids[i];
    return true;
}

choice selector::select(tables::path_table& table, std::uint32_t set_index, time_ns now,
                        std::uint32_t flow_hash) noexcept
{
    choice out;
    auto& s = table.set(set_index);
    if (!cache_current(s)) {
        rebuild(table, set_index);
    }
    if (probes() && probe_stale(table, set_index, now, out.probe)) {
        out.has_probe = true;
        rebuild(table, set_index); // the probed path's realVal doubled
    }
    if (_params.policy == policy::ecmp) {
        // All valid paths weigh the same; the flow's hash picks one of them.
        const auto& c = s.cache;
        if (c.total == 0) {
            return out;
        }
        const std::uint32_t valid = c.total / static_cast<std::uint32_t>(exp_table::weight_one);
        const std::uint32_t target =
            (flow_hash % valid) * static_cast<std::uint32_t>(exp_table::weight_one);
        std::size_t i = 0;
        while (c.cumulative[i] <= target) {
            ++i;
        }
        out.path = s.pids[i];
        out.has_path = true;
        return out;
    }
    out.has_path = draw(s, out.path);
    return out;
}

} // namespace laps::softmax
