#include "fabric/host.hpp"

#include <algorithm>

namespace laps::fabric {

time_ns host_info::virtual_time_of(time_ns reading, time_ns from) const noexcept
{
    const double rate = 1.0 + drift_ppm * 1e-6;
    time_ns v = from;
    for (;;) {
        const time_ns now_reads = clock(v);
        if (now_reads >= reading) {
            return v;
        }
        // At the clock's rate, then exactly (rounding can leave it 1 ns short).
        time_ns next = v + std::max<time_ns>(1, static_cast<time_ns>(std::ceil(static_cast<double>(reading - now_reads) / rate)));
        // A step forward on the way may get there first.
        for (const auto& s : clock_steps) {
            if (s.step > 0 && s.at > v && s.at < next) {
                next = s.at;
            }
        }
        v = next;
    }
}

} // namespace laps::fabric
