#include "softmax/selector.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace laps::softmax {

void selector::rebuild(tables::path_table& table, std::uint32_t set_index) const noexcept
{
    auto& s = table.set(set_index);
    auto& c = s.cache;
    const std::size_t n = s.count;

    // Gather the members once; invalid paths get latency "infinite".
    constexpr time_ns never = std::numeric_limits<time_ns>::max();
    std::array<time_ns, tables::max_paths_per_destination> real;
    time_ns min_real = never;
    time_ns stale_at = never;
    for (std::size_t i = 0; i < n; ++i) {
        const auto& e = table.path(s.pids[i]);
        real[i] = e.valid ? e.real_ns : never;
        if (e.valid) {
            min_real = std::min(min_real, e.real_ns);
            // measured_at + 2 realVal (realVal is at most 2^62 by mark_probed).
            const time_ns window = 2 * e.real_ns;
            stale_at = std::min(stale_at, e.measured_at > never - window ? never : e.measured_at + window);
        }
    }

    // Subtract the smallest latency first: every weight is then in (0, 1]
    // and neither overflows nor loses the best path to underflow, for any
    // latency up to 2^62 ns. x = beta (d - min) goes to the table in fixed point.
    // spray and ecmp ignore latency (beta 0: all valid paths weigh the same);
    // fastest is the limit of a huge beta.
    double beta = _params.beta.for_destination(s.max_base_ns);
    if (_params.policy == policy::spray || _params.policy == policy::ecmp) {
        beta = 0.0;
    } else if (_params.policy == policy::fastest) {
        beta = 1e3; // per ns: 0.04 ns of difference already gives weight 0
    }
    const double scale = beta * exp_table::fixed_per_unit;
    const double x_cap = static_cast<double>(exp_table::size) * 65536.0; // beyond: weight 0
    std::uint32_t running = 0;
    std::size_t i = 0;
    for (; i < n; ++i) {
        if (real[i] != never) {
            const double x = static_cast<double>(real[i] - min_real) * scale;
            running += _exp.weight(x < x_cap ? static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(x_cap));
        }
        c.cumulative[i] = running;
    }
    for (; i < c.cumulative.size(); ++i) {
        c.cumulative[i] = running;
    }
    c.total = running;
    c.stale_at = stale_at;
    c.built_version = s.version;
    c.built_epoch = _epoch;
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
    const bool probes = _params.probing && (_params.policy == policy::laps || _params.policy == policy::fastest);
    if (probes && probe_stale(table, set_index, now, out.probe)) {
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
