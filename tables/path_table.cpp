#include "tables/path_table.hpp"

#include <algorithm>
#include <cmath>
#include <new>

namespace laps::tables {

namespace {

constexpr auto relaxed = std::memory_order_relaxed;

std::string row_name(std::size_t index, const pst_row& row)
{
    return "pst row " + std::to_string(index) + " (dst " + row.destination.to_string() + ")";
}

} // namespace

path_table::path_table(const table_spec& spec, const path_table_options& options)
    : _pit(options.pit_capacity, options.memory), _memory(options.memory),
      _set_capacity(std::max<std::size_t>(options.set_capacity, 1)),
      _chunks((_set_capacity + set_chunk - 1) / set_chunk, nullptr, options.memory),
      _estimate_clock_offset(options.estimate_clock_offset), _clock(options.clock),
      _probe_backoff_cap_ns(std::max<time_ns>(options.probe_backoff_cap_ns, 1)),
      _reference_frame_bytes(options.reference_frame_bytes), _link_ps_per_byte(options.link_ps_per_byte),
      _tolerance_1024(static_cast<time_ns>(std::lround(std::clamp(options.update_tolerance, 0.0, 1.0) * 1024.0)))
{
    try {
        for (const auto& row : spec.pit) {
            add_path(row);
        }
        if (spec.pst.size() > _set_capacity) {
            throw table_error(std::to_string(spec.pst.size()) + " destinations exceed tables.pst_capacity " +
                              std::to_string(_set_capacity));
        }
        for (std::size_t i = 0; i < spec.pst.size(); ++i) {
            add_set(spec.pst[i].pids, row_name(i, spec.pst[i]), spec.pst[i].fabric_ipv4);
        }
    } catch (...) {
        free_chunks();
        throw;
    }
}

path_table::path_table(path_table&& other) noexcept
    : _pit(std::move(other._pit)), _memory(other._memory), _set_capacity(other._set_capacity),
      _chunks(std::move(other._chunks)), _set_count(other._set_count), _free_sets(std::move(other._free_sets)),
      _estimate_clock_offset(other._estimate_clock_offset), _clock(other._clock),
      _probe_backoff_cap_ns(other._probe_backoff_cap_ns), _reference_frame_bytes(other._reference_frame_bytes), _link_ps_per_byte(other._link_ps_per_byte),
      _tolerance_1024(other._tolerance_1024)
{
    other._chunks.clear();
    other._set_count = 0;
}

path_table::~path_table()
{
    free_chunks();
}

void path_table::free_chunks() noexcept
{
    for (auto*& chunk : _chunks) {
        if (chunk == nullptr) {
            continue;
        }
        for (std::size_t i = 0; i < set_chunk; ++i) {
            chunk[i].~path_set();
        }
        _memory->deallocate(chunk, sizeof(path_set) * set_chunk, alignof(path_set));
        chunk = nullptr;
    }
}

void path_table::add_path(const pit_row& row)
{
    const std::string name = "pit row for pid " + std::to_string(row.pid);
    if (row.pid >= _pit.capacity()) {
        throw table_error(name + ": pid is beyond the PIT capacity " + std::to_string(_pit.capacity()));
    }
    auto& e = _pit[row.pid];
    if (e.present.load(relaxed)) {
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
    // Not present, so no reader looks at it: plain writes, then the release.
    e.valid.store(row.valid, relaxed);
    e.hop_count = row.hop_count;
    e.anchor_count = row.anchor_count;
    e.anchors = row.anchors;
    e.base_ns = row.base_ns;
    e.uncongested_ns = uncongested;
    e.slot = 0;
    e.set.store(no_set, relaxed);
    // Until measured, realVal is the path's baseline (paper §III-C: "the
    // baseline latency of an uncongested path"); 2 x baseVal is then a safe
    // first timeout, 2 x the bare propagation delay would not be (RTT).
    e.real_ns.store(row.base_ns, relaxed);
    e.measured_at.store(0, relaxed);
    e.present.store(true, std::memory_order_release);
}

void path_table::remove_path(path_id pid)
{
    if (!_pit.contains(pid)) {
        throw table_error("pid " + std::to_string(pid) + " has no pit row");
    }
    auto& e = _pit[pid];
    if (e.set.load(relaxed) != no_set) {
        throw table_error("pid " + std::to_string(pid) + " serves a destination (path set " +
                          std::to_string(e.set.load(relaxed)) + "); delete that pst entry first");
    }
    // Readers bail out on a pid with no set before touching the rest.
    e.present.store(false, std::memory_order_release);
    e.valid.store(false, relaxed);
}

std::uint32_t path_table::add_set(std::span<const path_id> pids, const std::string& name, std::uint32_t fabric_ipv4)
{
    if (pids.empty()) {
        throw table_error(name + ": no pids");
    }
    if (pids.size() > max_paths_per_destination) {
        throw table_error(name + ": " + std::to_string(pids.size()) + " pids, at most " +
                          std::to_string(max_paths_per_destination));
    }
    for (std::size_t i = 0; i < pids.size(); ++i) {
        const path_id pid = pids[i];
        if (!_pit.contains(pid)) {
            throw table_error(name + ": pid " + std::to_string(pid) + " has no pit row");
        }
        if (const auto owner = _pit[pid].set.load(relaxed); owner != no_set) {
            throw table_error(name + ": pid " + std::to_string(pid) + " already serves pst row " +
                              std::to_string(owner));
        }
        if (std::find(pids.begin(), pids.begin() + static_cast<std::ptrdiff_t>(i), pid) !=
            pids.begin() + static_cast<std::ptrdiff_t>(i)) {
            throw table_error(name + ": pid " + std::to_string(pid) + " is listed twice");
        }
    }
    if (_free_sets.empty() && _set_count == _set_capacity) {
        throw table_error(name + ": the table holds " + std::to_string(_set_capacity) +
                          " destinations already (tables.pst_capacity)");
    }
    const auto index = _free_sets.empty() ? static_cast<std::uint32_t>(_set_count) : _free_sets.back();
    auto*& chunk = _chunks[index / set_chunk];
    if (chunk == nullptr) {
        void* raw = _memory->allocate(sizeof(path_set) * set_chunk, alignof(path_set));
        chunk = static_cast<path_set*>(raw);
        for (std::size_t i = 0; i < set_chunk; ++i) {
            new (chunk + i) path_set();
        }
    }
    if (_free_sets.empty()) {
        ++_set_count;
    } else {
        _free_sets.pop_back();
    }
    // Unreachable until the members are linked and the PST names it: plain writes.
    auto& s = mutable_set(index);
    s.count = 0;
    s.max_base_ns = 0;
    s.max_anchors = 0;
    for (const path_id pid : pids) {
        auto& e = _pit[pid];
        e.slot = s.count;
        s.pids[s.count++] = pid;
        s.max_base_ns = std::max(s.max_base_ns, e.base_ns);
        s.max_anchors = std::max(s.max_anchors, e.anchor_count);
    }
    s.fabric_ipv4 = fabric_ipv4;
    s.live = true;
    // A reused index keeps its clock offset estimate only if the same host
    // comes back; it need not: start over.
    s.clock_offset.base.store(clock_offset_state::none, relaxed);
    refresh_max_base_valid(index);
    // A reused index keeps counting versions, so no cache built for the
    // set's previous members can look current.
    bump(index, path_set::any_slot);
    for (const path_id pid : pids) {
        _pit[pid].set.store(index, std::memory_order_release);
    }
    return index;
}

void path_table::unlink_set(std::uint32_t set) noexcept
{
    auto& s = mutable_set(set);
    for (const path_id pid : s.members()) {
        _pit[pid].set.store(no_set, std::memory_order_release);
    }
    bump(set, path_set::any_slot);
}

void path_table::release_set(std::uint32_t set) noexcept
{
    auto& s = mutable_set(set);
    if (!s.live) {
        return;
    }
    for (const path_id pid : s.members()) {
        if (_pit[pid].set.load(relaxed) == set) {
            _pit[pid].set.store(no_set, std::memory_order_release);
        }
    }
    s.live = false;
    bump(set, path_set::any_slot);
    _free_sets.push_back(set);
}

std::uint32_t path_table::record_latency(path_id pid, const latency_sample& sample, time_ns now, std::uint8_t* events,
                                         time_ns max_real, time_ns* recorded) noexcept
{
    const time_ns raw_latency_ns = sample.raw_ns;
    auto& e = _pit[pid];
    const std::uint32_t set = e.set_index();
    if (set == no_set) {
        return no_set; // its destination was deleted: nothing uses it
    }
    auto& s = mutable_set(set);
    time_ns real = raw_latency_ns;
    if (_estimate_clock_offset) {
        // raw = offset + true delay, and true delay >= this packet's
        // uncongested delay: raw - uncongested bounds the offset from above.
        // A packet smaller than the reference frame serialises faster on
        // each of the path's links.
        const time_ns uncongested = uncongested_for(e, sample.frame_bytes);
        // The ACK came back on the reversed path: at least its own
        // uncongested delay of the round trip was not the way out.
        const time_ns floor = sample.rtt_ns < 0 ? no_offset_floor
                                                : raw_latency_ns - sample.rtt_ns + uncongested_for(e, sample.answer_bytes);
        const clock_offset_sample offset =
            sample_clock_offset(s.clock_offset, _clock, raw_latency_ns - uncongested, now, floor);
        if (events != nullptr) {
            *events = offset.events;
        }
        // Against this packet's own uncongested delay, expressed for the
        // reference frame: realVal = the reference frame's delay + queueing.
        real = raw_latency_ns - offset.offset - (uncongested - e.uncongested_ns);
    }
    if (real > max_real) {
        if (events != nullptr) {
            *events |= offset_implausible;
        }
        return set;
    }
    // realVal is also a time interval (2 x realVal): at least 1 ns, and at
    // most max_real_ns, so that time + 2 x realVal never overflows.
    real = std::clamp<time_ns>(real, 1, max_real_ns);
    if (recorded != nullptr) {
        *recorded = real;
    }
    if (_tolerance_1024 != 0) {
        // Within the tolerance nothing is written: the entry's line stays
        // shared in every worker's cache instead of moving on every ACK.
        const time_ns old = e.real();
        const time_ns slack = (old >> 10) * _tolerance_1024;
        const time_ns moved = real > old ? real - old : old - real;
        if (moved <= slack && now - e.time() <= 8 * slack) {
            return set;
        }
    }
    e.real_ns.store(real, relaxed);
    e.measured_at.store(now, relaxed);
    bump(s, e.slot);
    return set;
}

time_ns path_table::uncongested_for(const path_entry& e, std::uint32_t frame_bytes) const noexcept
{
    // A packet smaller than the reference frame serialises faster on each
    // of the path's links.
    if (frame_bytes == 0 || _link_ps_per_byte == 0) {
        return e.uncongested_ns;
    }
    const auto shorter = static_cast<time_ns>(_reference_frame_bytes) - static_cast<time_ns>(frame_bytes);
    return e.uncongested_ns - shorter * e.hop_count * static_cast<time_ns>(_link_ps_per_byte) / 1000;
}

bool path_table::mark_probed(path_id pid, time_ns now, time_ns seen_time) noexcept
{
    auto& e = _pit[pid];
    const std::uint32_t set = e.set_index();
    if (set == no_set) {
        return false;
    }
    // One worker wins the probe: the others see the new time and back off.
    if (!e.measured_at.compare_exchange_strong(seen_time, now, relaxed)) {
        return false;
    }
    // Doubled up to the cap (Alg. 1 line 7, bounded): a path that comes back
    // is probed again within 2 x the cap. A measured realVal above the cap
    // stays as it is.
    const time_ns real = e.real();
    e.real_ns.store(real >= _probe_backoff_cap_ns ? real : std::min(2 * real, _probe_backoff_cap_ns), relaxed);
    bump(set, e.slot);
    return true;
}

bool path_table::set_valid(path_id pid, bool valid) noexcept
{
    auto& e = _pit[pid];
    if (e.valid.load(relaxed) == valid) {
        return false;
    }
    if (valid) {
        // A path back from down starts again from its baseline, as a new
        // one does: what it measured before (or the stall that took it down)
        // says nothing about it now, and a realVal left high would keep
        // Eq. 1 off it until a probe, 2 x that realVal later.
        e.real_ns.store(e.base_ns, relaxed);
        e.measured_at.store(0, relaxed);
    }
    e.valid.store(valid, relaxed);
    const std::uint32_t set = e.set.load(relaxed);
    if (set != no_set) {
        refresh_max_base_valid(set);
        bump(set, e.slot);
    }
    return true;
}

bool path_table::set_base(path_id pid, time_ns base_ns) noexcept
{
    auto& e = _pit[pid];
    if (base_ns <= 0 || base_ns < e.uncongested_ns || base_ns == e.base_ns) {
        return false;
    }
    e.base_ns = base_ns;
    const std::uint32_t set = e.set.load(relaxed);
    if (set != no_set) {
        refresh_max_base_valid(set);
        bump(set, e.slot);
    }
    return true;
}

void path_table::refresh_max_base_valid(std::uint32_t set) noexcept
{
    auto& s = mutable_set(set);
    time_ns t = 0;
    for (const path_id pid : s.members()) {
        const auto& e = _pit[pid];
        if (e.usable()) {
            t = std::max(t, e.base_ns);
        }
    }
    s.max_base_valid_ns.store(t, relaxed);
}

time_ns path_table::min_real_valid(std::uint32_t set, time_ns now, bool only_fresh) const noexcept
{
    set_minimum scan;
    scan_minimum(this->set(set), now, only_fresh, scan);
    return scan.real;
}

void path_table::scan_minimum(const path_set& s, time_ns now, bool only_fresh, set_minimum& c) const noexcept
{
    constexpr time_ns unset = std::numeric_limits<time_ns>::max();
    time_ns fresh = unset;
    time_ns any = unset;
    std::uint8_t fresh_slot = set_minimum::none;
    std::uint8_t any_slot = set_minimum::none;
    time_ns fresh_until = unset;
    for (std::uint8_t slot = 0; slot < s.count; ++slot) {
        const auto& e = _pit[s.pids[slot]];
        if (!e.usable()) {
            continue;
        }
        const time_ns real = e.real();
        if (real < any) {
            any = real;
            any_slot = slot;
        }
        const time_ns until = only_fresh ? e.time() + 2 * real : unset;
        if (now <= until && real < fresh) {
            fresh = real;
            fresh_slot = slot;
            fresh_until = until;
        }
    }
    c.only_fresh = only_fresh;
    c.from_fresh = fresh != unset;
    c.real = c.from_fresh ? fresh : any;
    c.slot = c.from_fresh ? fresh_slot : any_slot;
    c.stale_at = c.from_fresh ? fresh_until : unset;
}

time_ns path_table::min_queue_fresh(std::uint32_t set, time_ns now) const noexcept
{
    const path_set& s = this->set(set);
    time_ns queue = no_queue;
    for (std::uint8_t slot = 0; slot < s.count; ++slot) {
        const auto& e = _pit[s.pids[slot]];
        const time_ns real = e.real();
        if (e.usable() && now <= e.time() + 2 * real) {
            queue = std::min(queue, std::max<time_ns>(real - e.uncongested_ns, 0));
        }
    }
    return queue;
}

time_ns path_table::min_real_valid(std::uint32_t set, time_ns now, bool only_fresh, set_minimum& c) const noexcept
{
    constexpr time_ns unset = std::numeric_limits<time_ns>::max();
    const path_set& s = this->set(set);
    const std::uint64_t change = s.change.load(std::memory_order_acquire);
    const auto version = static_cast<std::uint32_t>(change >> 32);
    // Staleness only grows with time, so a cache is good for later times
    // only (an earlier `now` may find a member fresh again).
    // Any order of the changed entries gives the same minimum.
    const bool current =
        c.only_fresh == only_fresh && now >= c.seen_at && s.for_each_change(change, c.version, [&](std::uint8_t slot) {
            const auto& e = _pit[s.pids[slot]];
            const bool usable = e.usable();
            const time_ns real = e.real();
            const time_ns until = only_fresh ? e.time() + 2 * real : unset;
            const bool fresh = usable && now <= until;
            if (slot == c.slot) {
                // The minimum's own entry: still the minimum if it stayed in
                // its class and did not grow; otherwise another member may be.
                if (!(c.from_fresh ? fresh : usable && !fresh) || real > c.real) {
                    return false;
                }
                c.real = real;
                c.stale_at = c.from_fresh ? until : unset;
            } else if (fresh && (!c.from_fresh || real < c.real)) {
                c.from_fresh = true;
                c.real = real;
                c.slot = slot;
                c.stale_at = until;
            } else if (!c.from_fresh && usable && real < c.real) {
                c.real = real;
                c.slot = slot;
            }
            return true;
        });
    if (!current || now > c.stale_at) {
        scan_minimum(s, now, only_fresh, c);
    }
    c.version = version;
    c.seen_at = now;
    return c.real;
}

} // namespace laps::tables
