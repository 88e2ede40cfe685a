#include "softmax/selector.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace laps::softmax {

namespace {

constexpr time_ns never = std::numeric_limits<time_ns>::max();

} // namespace

double selector::beta_scale(const tables::path_set& s) const noexcept
{
    // spray and ecmp ignore latency (beta 0: all valid paths weigh the same);
    // fastest is the limit of a huge beta.
    double beta = _params.beta.for_destination(s.max_base_ns);
    if (_params.policy == policy::spray || _params.policy == policy::ecmp || _params.policy == policy::reps ||
        pins_flows(_params.policy)) {
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
        return _exp->weight(x < cap ? static_cast<std::uint64_t>(x) : static_cast<std::uint64_t>(cap));
    }
    return _exp->growth(static_cast<std::uint64_t>(-x));
}

template <bool with_time>
std::uint32_t selector::observe_slot(const tables::path_table& table, const tables::path_set& s,
                                     selection_cache& c, std::size_t i) noexcept
{
    // One load of each field: the weights are computed from these copies, so
    // a concurrent writer cannot make one rebuild see two values of a path.
    const auto& e = table.path(s.pids[i]);
    const bool valid = e.usable();
    const time_ns real = e.real();
    const auto bit = static_cast<std::uint16_t>(1u << i);
    // Without probing the entry's time is not read: staleness only matters
    // to Alg. 1's probes, and an ACK that only refreshed it changes nothing here.
    time_ns time = c.seen_time[i];
    if constexpr (with_time) {
        time = e.time();
    }
    if (valid == ((c.seen_valid & bit) != 0) && real == c.seen_real[i] && time == c.seen_time[i]) {
        return 0;
    }
    c.seen_valid = static_cast<std::uint16_t>(valid ? c.seen_valid | bit : c.seen_valid & ~bit);
    c.seen_real[i] = real;
    if constexpr (with_time) {
        c.seen_time[i] = time;
        // measured_at + 2 realVal (realVal <= tables::max_real_ns, 2^47: no overflow).
        const time_ns window = 2 * real;
        c.stale[i] = !valid ? never : time > never - window ? never : time + window;
    }
    return bit;
}

std::uint32_t selector::observe(const tables::path_table& table, const tables::path_set& s,
                                selection_cache& c, bool with_time) noexcept
{
    std::uint32_t changed = 0;
    for (std::size_t i = 0; i < s.count; ++i) {
        changed |= with_time ? observe_slot<true>(table, s, c, i) : observe_slot<false>(table, s, c, i);
    }
    return changed;
}

[[gnu::always_inline]] inline time_ns selector::earliest_stale(const tables::path_set& s,
                                                                 const selection_cache& c) const noexcept
{
    if (!_probes) {
        return never; // nothing reads it (observe_slot did not track the times)
    }
    time_ns stale_at = never;
    for (std::size_t i = 0; i < s.count; ++i) {
        stale_at = std::min(stale_at, c.stale[i]);
    }
    return stale_at;
}

void selector::finish(const tables::path_set& s, selection_cache& c, std::uint32_t version) const noexcept
{
    std::uint32_t running = 0;
    time_ns stale_at = never; // stays so without probing (observe_slot did not track the times)
    std::size_t i = 0;
    if (_probes) {
        for (; i < s.count; ++i) {
            running += c.weights[i];
            c.cumulative[i] = running;
            stale_at = std::min(stale_at, c.stale[i]);
        }
    } else {
        for (; i < s.count; ++i) {
            running += c.weights[i];
            c.cumulative[i] = running;
        }
    }
    for (; i < c.cumulative.size(); ++i) {
        c.cumulative[i] = running;
    }
    c.total = running;
    c.stale_at = stale_at;
    c.built_version = version;
    c.built_epoch = _epoch;
}

void selector::compute_all(const tables::path_set& s, selection_cache& c, std::uint32_t version) const noexcept
{
    // The reference is the smallest latency: every weight is then in (0, 1]
    // and neither overflows nor loses the best path to underflow, for any
    // latency up to 2^62 ns.
    time_ns min_real = never;
    for (std::size_t i = 0; i < s.count; ++i) {
        if ((c.seen_valid >> i) & 1u) {
            min_real = std::min(min_real, c.seen_real[i]);
        }
    }
    c.scale = beta_scale(s);
    c.quantum_ns = c.scale > 0.0 ? static_cast<time_ns>(selection_quantum * exp_table::fixed_per_unit / c.scale) : never;
    c.weighted_valid = c.seen_valid;
    c.weighted_real = c.seen_real;
    c.reference_ns = min_real;
    // Incremental updates may go this far below the reference (weights up to e^2).
    const double headroom = c.scale > 0.0 ? exp_table::growth_limit * exp_table::fixed_per_unit / c.scale : 0.0;
    c.floor_ns = headroom < static_cast<double>(min_real) ? min_real - static_cast<time_ns>(headroom)
                                                          : std::numeric_limits<time_ns>::min();
    for (std::size_t i = 0; i < s.count; ++i) {
        c.weights[i] = ((c.seen_valid >> i) & 1u) ? weight_of(c.seen_real[i] - min_real, c.scale) : 0;
    }
    finish(s, c, version);
}

void selector::full_rebuild(const tables::path_table& table, std::uint32_t set_index) noexcept
{
    const auto& s = table.set(set_index);
    auto& c = _caches[set_index];
    // The version first: a change after this load moves it again, and the
    // next packet rebuilds.
    const std::uint32_t version = s.current_version();
    forget_seen(c);
    observe(table, s, c, _probes);
    compute_all(s, c, version);
}

void selector::apply(const tables::path_set& s, selection_cache& c, std::uint32_t version,
                     std::uint32_t changed) const noexcept
{
    const bool never_built = c.built_version == std::numeric_limits<std::uint32_t>::max() && c.total == 0;
    if (c.built_epoch != _epoch || never_built) {
        compute_all(s, c, version);
        return;
    }
    if (changed == 0) {
        c.built_version = version; // a bump whose change this cache had seen already
        return;
    }
    bool moved = false;
    for (std::uint32_t mask = changed; mask != 0; mask &= mask - 1) {
        const auto i = static_cast<std::size_t>(__builtin_ctz(mask));
        const auto bit = static_cast<std::uint16_t>(1u << i);
        if ((c.seen_valid & bit) == 0) {
            moved |= (c.weighted_valid & bit) != 0;
            c.weighted_valid = static_cast<std::uint16_t>(c.weighted_valid & ~bit);
            c.weights[i] = 0;
            continue;
        }
        const time_ns real = c.seen_real[i];
        const time_ns drift = real > c.weighted_real[i] ? real - c.weighted_real[i] : c.weighted_real[i] - real;
        if ((c.weighted_valid & bit) != 0 && drift <= c.quantum_ns) {
            continue; // within the quantum: the cached weight stands
        }
        if (real < c.floor_ns) {
            compute_all(s, c, version); // much faster than the reference
            return;
        }
        c.weights[i] = weight_of(real - c.reference_ns, c.scale);
        c.weighted_real[i] = real;
        c.weighted_valid = static_cast<std::uint16_t>(c.weighted_valid | bit);
        moved = true;
    }
    if (!moved) {
        // The distribution stands; only the staleness times moved.
        c.stale_at = earliest_stale(s, c);
        c.built_version = version;
        return;
    }
    std::uint32_t best = 0;
    for (std::size_t i = 0; i < s.count; ++i) {
        best = std::max(best, c.weights[i]);
    }
    // Every path far slower than the reference: weights lose precision (or
    // vanish); take the current minimum as the new reference.
    constexpr std::uint32_t precision_floor = 1u << 20;
    if (c.seen_valid != 0 && best < precision_floor) {
        compute_all(s, c, version);
        return;
    }
    finish(s, c, version);
}

void selector::rebuild(const tables::path_table& table, std::uint32_t set_index) noexcept
{
    const auto& s = table.set(set_index);
    auto& c = _caches[set_index];
    const std::uint32_t version = s.current_version();
    apply(s, c, version, observe(table, s, c, _probes));
}

template <bool with_time>
void selector::update_from(const tables::path_table& table, const tables::path_set& s, selection_cache& c,
                           std::uint64_t change) noexcept
{
    const auto version = static_cast<std::uint32_t>(change >> 32);
    // A few versions behind: the change word names the entries that moved
    // (their values were written before the bumps we acquired).
    // (A slot named twice reads as unchanged the second time.)
    std::uint32_t changed = 0;
    if (c.built_epoch == _epoch && s.for_each_change(change, c.built_version, [&](std::uint8_t slot) {
            changed |= observe_slot<with_time>(table, s, c, slot);
            return true;
        })) {
        apply(s, c, version, changed);
        return;
    }
    if (c.built_epoch != _epoch) {
        // New parameters (probing may have been switched on, and the
        // staleness times were not tracked): read every entry afresh.
        forget_seen(c);
    }
    // Entries observed before the walk gave up count as changed too.
    apply(s, c, version, changed | observe(table, s, c, with_time));
}

void selector::update(const tables::path_table& table, const tables::path_set& s, selection_cache& c,
                      std::uint64_t change) noexcept
{
    if (_probes) {
        update_from<true>(table, s, c, change);
    } else {
        update_from<false>(table, s, c, change);
    }
}

bool selector::probe_stale(tables::path_table& table, std::uint32_t set_index, time_ns now, path_id& probed) noexcept
{
    const auto& s = table.set(set_index);
    if (now <= _caches[set_index].stale_at) {
        return false;
    }
    // Reservoir-pick one stale path uniformly, without a temporary list.
    std::uint32_t stale_seen = 0;
    time_ns probed_time = 0;
    for (const path_id pid : s.members()) {
        const auto& e = table.path(pid);
        const time_ns time = e.time();
        if (e.usable() && now - time > 2 * e.real()) {
            ++stale_seen;
            if (_rng.below(stale_seen) == 0) {
                probed = pid;
                probed_time = time;
            }
        }
    }
    // Another worker may have probed it (or an ACK refreshed it) since we
    // looked: then it is not ours to probe.
    return stale_seen != 0 && table.mark_probed(probed, now, probed_time);
}

bool selector::draw(const tables::path_table& table, std::uint32_t set_index, path_id& chosen) noexcept
{
    return draw_from(table.set(set_index), _caches[set_index], chosen);
}

bool selector::draw_from(const tables::path_set& s, const selection_cache& c, path_id& chosen) noexcept
{
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
    const auto& s = table.set(set_index);
    auto& c = _caches[set_index];
    refresh(table, s, c);
    if (probes() && probe_stale(table, set_index, now, out.probe)) {
        out.has_probe = true;
        refresh(table, s, c); // the probed path's realVal doubled
    }
    if (c.total == 0) {
        return out;
    }
    if (_params.policy == policy::ecmp) {
        // All valid paths weigh the same; the flow's hash picks one of them.
        const std::uint32_t valid = c.total / static_cast<std::uint32_t>(exp_table::weight_one);
        const std::uint32_t target = (flow_hash % valid) * static_cast<std::uint32_t>(exp_table::weight_one);
        std::size_t i = 0;
        while (c.cumulative[i] <= target) {
            ++i;
        }
        out.path = s.pids[i];
        out.has_path = true;
        return out;
    }
    out.has_path = draw_from(s, c, out.path);
    return out;
}

choice selector::select_reps(const tables::path_table& table, std::uint32_t set_index, time_ns now) noexcept
{
    choice out;
    const auto& s = table.set(set_index);
    if (s.count == 0) {
        return out;
    }
    const std::uint16_t entropy = _reps[set_index].on_send(0, now);
    for (std::size_t k = 0; k < s.count; ++k) {
        const std::size_t slot = (entropy + k) % s.count;
        if (table.path(s.pids[slot]).usable()) {
            out.path = s.pids[slot];
            out.has_path = true;
            break;
        }
    }
    return out;
}

} // namespace laps::softmax
