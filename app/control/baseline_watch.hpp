#pragma once
// Does each path's baseVal match what its ports measure? (docs/app.md "A
// baseline that matches the ports".) Alg. 2 cuts a flow's rate
// whenever its best path's latency exceeds baseVal; a baseVal below every
// latency the path can show (a config written for a hardware fabric, run
// over TAP and software lcores) holds every flow at the rate floor, with
// nothing to see but a slow transfer. The control lcore looks at the
// smallest latency each tracked path has recorded (published by the
// workers) every check: a path whose minimum stays above its baseVal gets
// one warning naming it and the minimum (`base_below_measured`), or, with
// tables.calibrate_base, baseVal raised to that minimum plus the path's
// margin (`base_calibrated`, logged once per path), then following the
// minimum down as lighter moments show it, never below the configured value.

#include "app/run/instance.hpp"

#include <cstdint>
#include <vector>

namespace laps::app {

class baseline_watch {
public:
    explicit baseline_watch(instance& inst);

    // Control lcore; a few hundred ns per tracked path.
    void check();

    std::uint64_t below_measured() const noexcept { return _below_measured; }
    std::uint64_t calibrated() const noexcept { return _calibrated; }

    // Latencies needed before a path is judged: one early ACK that waited
    // behind a burst must not set the baseline.
    static constexpr std::uint64_t min_samples = 64;

private:
    struct path_state {
        bool warned = false;
        bool calibrated = false;
        std::int64_t configured_ns = -1; // baseVal at first look: never calibrated below
        std::int64_t margin_ns = 0;      // configured base - uncongested
    };

    instance& _inst;
    std::vector<path_state> _paths; // by tracked index
    std::uint64_t _below_measured = 0;
    std::uint64_t _calibrated = 0;
};

} // namespace laps::app
