#include "tables/path_table.hpp"

#include <algorithm>

namespace laps::tables {

namespace {

std::string row_name(std::size_t index, const pst_row& row)
{
    return "pst row " + std::to_string(index) + " (dst " + row.destination.to_string() + ")";
}

} // namespace

path_table::path_table(const table_spec& spec, const path_table_options& options)
    : _pit(options.pit_capacity), _estimate_clock_offset(options.estimate_clock_offset)
{
    for (const auto& row : spec.pit) {
        add_path(row);
    }
    _sets.reserve(spec.pst.size());
    for (std::size_t i = 0; i < spec.pst.size(); ++i) {
        add_set(spec.pst[i].pids, row_name(i, spec.pst[i]));
    }
}

void path_table::add_path(const pit_row& row)
{
    const std::string name = "pit row for pid " + std::to_string(row.pid);
    if (row.pid >= _pit.capacity()) {
        throw table_error(name + ": pid is beyond the PIT capacity " + std::to_string(_pit.capacity()));
    }
    auto& e = _pit[row.pid];
    if (e.present) {
        throw table_error("pid " + std::to_string(row.pid) + " is already defined");
    }
    if (row.anchor_count > max_anchors) {
        throw table_error(name + ": " + std::to_string(row.anchor_count) + " anchors, at most " +
                          std::to_string(max_anchors));
    }
    if (row.base_ns <= 0) {
        throw table_error(name + ": base_ns must be positive");
    }
    // 0 means "not given": then the idle delay is taken to be baseVal itself.
    const time_ns uncongested = row.uncongested_ns == 0 ? row.base_ns : row.uncongested_ns;
    if (uncongested < 0 || uncongested > row.base_ns) {
        throw table_error(name + ": uncongested_ns must be in (0, base_ns]");
    }
    e = path_entry{};
    e.present = true;
    e.valid = row.valid;
    e.hop_count = row.hop_count;
    e.anchor_count = row.anchor_count;
    e.anchors = row.anchors;
    e.base_ns = row.base_ns;
    e.uncongested_ns = uncongested;
    // Until measured, realVal is the path's baseline (paper §III-C: "the
    // baseline latency of an uncongested path"); 2 x baseVal is then a safe
    // first timeout, 2 x the bare propagation delay would not be (RTT).
    e.real_ns = row.base_ns;
    e.measured_at = 0;
}

void path_table::remove_path(path_id pid)
{
    if (!_pit.contains(pid)) {
        throw table_error("pid " + std::to_string(pid) + " has no pit row");
    }
    if (_pit[pid].set != no_set) {
        throw table_error("pid " + std::to_string(pid) + " serves a destination (path set " +
                          std::to_string(_pit[pid].set) + "); delete that pst entry first");
    }
    _pit[pid] = path_entry{};
}

std::uint32_t path_table::add_set(std::span<const path_id> pids, const std::string& name)
{
    if (pids.empty()) {
        throw table_error(name + ": no pids");
    }
    if (pids.size() > max_paths_per_destination) {
        throw table_error(name + ": " + std::to_string(pids.size()) + " pids, at most " +
                          std::to_string(max_paths_per_destination));
    }
    const auto index = _free_sets.empty() ? static_cast<std::uint32_t>(_sets.size()) : _free_sets.back();
    for (std::size_t i = 0; i < pids.size(); ++i) {
        const path_id pid = pids[i];
        if (!_pit.contains(pid)) {
            throw table_error(name + ": pid " + std::to_string(pid) + " has no pit row");
        }
        if (_pit[pid].set != no_set) {
            throw table_error(name + ": pid " + std::to_string(pid) + " already serves pst row " +
                              std::to_string(_pit[pid].set));
        }
        if (std::find(pids.begin(), pids.begin() + static_cast<std::ptrdiff_t>(i), pid) !=
            pids.begin() + static_cast<std::ptrdiff_t>(i)) {
            throw table_error(name + ": pid " + std::to_string(pid) + " is listed twice");
        }
    }
    path_set s;
    for (const path_id pid : pids) {
        auto& e = _pit[pid];
        e.set = index;
        e.slot = s.count;
        s.pids[s.count++] = pid;
        s.max_base_ns = std::max(s.max_base_ns, e.base_ns);
    }
    if (index == _sets.size()) {
        _sets.push_back(s);
    } else {
        _free_sets.pop_back();
        // A reused index keeps counting versions, so no cache built for the
        // set's previous members can look current.
        s.version = _sets[index].version + 1;
        _sets[index] = s;
    }
    refresh_max_base_valid(index);
    return index;
}

void path_table::release_set(std::uint32_t set) noexcept
{
    auto& s = _sets[set];
    if (!s.live) {
        return;
    }
    for (const path_id pid : s.members()) {
        _pit[pid].set = no_set;
    }
    s.count = 0;
    s.live = false;
    ++s.version;
    _free_sets.push_back(set);
}

std::uint32_t path_table::record_latency(path_id pid, time_ns raw_latency_ns, time_ns now) noexcept
{
    auto& e = _pit[pid];
    if (e.set == no_set) {
        return no_set; // its destination was deleted: nothing uses it
    }
    auto& s = _sets[e.set];
    time_ns real = raw_latency_ns;
    if (_estimate_clock_offset) {
        // raw = offset + true delay, and true delay >= uncongested delay, so
        // raw - uncongested is an upper bound of the offset; keep the smallest.
        s.clock_offset_ns = std::min(s.clock_offset_ns, raw_latency_ns - e.uncongested_ns);
        real = raw_latency_ns - s.clock_offset_ns;
    }
    // realVal is also a time interval (2 x realVal): keep it at least 1 ns.
    e.real_ns = std::max<time_ns>(real, 1);
    e.measured_at = now;
    bump(pid);
    return e.set;
}

void path_table::mark_probed(path_id pid, time_ns now) noexcept
{
    auto& e = _pit[pid];
    // Doubling can only overflow after ~45 doublings of a 1 ns path; saturate anyway.
    e.real_ns = e.real_ns > std::numeric_limits<time_ns>::max() / 2 ? std::numeric_limits<time_ns>::max() / 2
                                                                     : e.real_ns * 2;
    e.measured_at = now;
    bump(pid);
}

void path_table::set_valid(path_id pid, bool valid) noexcept
{
    auto& e = _pit[pid];
    if (e.valid != valid) {
        e.valid = valid;
        bump(pid);
        refresh_max_base_valid(e.set);
    }
}

void path_table::refresh_max_base_valid(std::uint32_t set) noexcept
{
    time_ns t = 0;
    for (const path_id pid : _sets[set].members()) {
        const auto& e = _pit[pid];
        if (e.valid) {
            t = std::max(t, e.base_ns);
        }
    }
    _sets[set].max_base_valid_ns = t;
}

time_ns path_table::min_real_valid(std::uint32_t set, time_ns now, bool only_fresh) const noexcept
{
    time_ns fresh = std::numeric_limits<time_ns>::max();
    time_ns any = std::numeric_limits<time_ns>::max();
    for (const path_id pid : _sets[set].members()) {
        const auto& e = _pit[pid];
        if (e.valid) {
            any = std::min(any, e.real_ns);
            if (!only_fresh || now - e.measured_at <= 2 * e.real_ns) {
                fresh = std::min(fresh, e.real_ns);
            }
        }
    }
    return fresh != std::numeric_limits<time_ns>::max() ? fresh : any;
}

} // namespace laps::tables
