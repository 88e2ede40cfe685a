#include "fabric/schemes/dre.hpp"

#include <algorithm>
#include <cmath>

namespace laps::fabric::schemes {

std::uint8_t dre_table::level(port_id p, common::time_ns now)
{
    auto& d = _x[p];
    if (now > d.period_start) {
        const common::time_ns periods = (now - d.period_start) / _p.period_ns;
        if (periods > 0) {
            d.bytes *= std::pow(1.0 - _p.alpha, static_cast<double>(periods));
            d.period_start += periods * _p.period_ns;
        }
    }
    const double capacity = _ports[p].rate_bps * (static_cast<double>(_p.period_ns) / 1e9) / _p.alpha;
    const double ratio = d.bytes * 8.0 / capacity;
    const double levels = std::ldexp(1.0, static_cast<int>(_p.quantize_bits));
    return static_cast<std::uint8_t>(std::min(levels - 1, std::floor(ratio * levels)));
}

} // namespace laps::fabric::schemes
