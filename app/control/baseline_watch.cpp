#include "app/control/baseline_watch.hpp"

#include "app/log.hpp"

#include <algorithm>
#include <limits>
#include <mutex>

namespace laps::app {

baseline_watch::baseline_watch(instance& inst) : _inst(inst), _paths(inst.tracked_pids().size()) {}

void baseline_watch::check()
{
    constexpr auto relaxed = std::memory_order_relaxed;
    const bool calibrate = _inst.config().engine.algo.tables.calibrate_base;
    const auto& pids = _inst.tracked_pids();
    for (std::size_t i = 0; i < pids.size(); ++i) {
        std::uint64_t samples = 0;
        std::int64_t minimum = std::numeric_limits<std::int64_t>::max();
        for (std::size_t w = 0; w < _inst.worker_count(); ++w) {
            const published_stats& p = _inst.published_at(w);
            samples += p.per_path_samples[i].load(relaxed);
            minimum = std::min(minimum, p.per_path_latency_min[i].load(relaxed));
        }
        if (samples < min_samples) {
            continue;
        }
        const tables::path_id pid = pids[i];
        auto& tables = _inst.tables();
        const std::lock_guard lock(tables.control_mutex());
        if (!tables.paths().contains(pid)) {
            continue;
        }
        const tables::path_entry& e = tables.paths().path(pid);
        path_state& s = _paths[i];
        if (s.configured_ns < 0) {
            s.configured_ns = e.base_ns;
            s.margin_ns = e.base_ns > e.uncongested_ns ? e.base_ns - e.uncongested_ns : 0;
        }
        // The configured margin, or 10% of the minimum when the row has none:
        // what the warning suggests and what calibration adds.
        const std::int64_t margin = s.margin_ns > 0 ? s.margin_ns : minimum / 10;
        if (s.calibrated) {
            // The minimum only falls: a latency seen under load at the first
            // look gives way to the path's own as quieter moments show it.
            tables.set_base(pid, std::max(s.configured_ns, minimum + margin));
            continue;
        }
        if (minimum <= e.base_ns) {
            continue;
        }
        const std::string who = (_inst.name() == "laps" ? std::string() : _inst.name() + ": ") + "path " +
                                std::to_string(pid);
        if (!calibrate) {
            if (!s.warned) {
                s.warned = true;
                ++_below_measured;
                log_line("warning: " + who + ": every latency measured is above its base_ns " +
                         std::to_string(e.base_ns) + " (smallest " + std::to_string(minimum) + " ns over " +
                         std::to_string(samples) + " ACKs): Alg. 2 takes every ACK as congestion and holds its flows " +
                         "near the rate floor; set base_ns to about " + std::to_string(minimum + margin) +
                         " or tables.calibrate_base: true");
            }
            continue;
        }
        const std::int64_t before = e.base_ns;
        if (tables.set_base(pid, minimum + margin)) {
            s.calibrated = true;
            ++_calibrated;
            log_line("calibrated: " + who + ": base_ns " + std::to_string(before) + " -> " +
                     std::to_string(minimum + margin) + " (smallest latency measured " + std::to_string(minimum) +
                     " ns over " + std::to_string(samples) + " ACKs + margin " + std::to_string(margin) + " ns)");
        }
    }
}

} // namespace laps::app
