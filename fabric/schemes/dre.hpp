#pragma once
// A discounting rate estimator per port (CONGA §3.5; also DLB's and GLB's
// load metric): X grows by the bytes the port sends and decays by (1 - alpha)
// every period; its level is X / (rate x period / alpha), quantised to
// `quantize_bits` bits. Decay is applied when a port is read or sent on.

#include "common/time.hpp"
#include "fabric/link.hpp"

#include <cstdint>
#include <vector>

namespace laps::fabric::schemes {

struct dre_params {
    common::time_ns period_ns = 50 * common::ns_per_us; // the artefact's conga_dreTime 50 us
    double alpha = 0.2;                                   // conga_alpha
    std::uint32_t quantize_bits = 3;                      // conga_quantizeBit
};

class dre_table {
public:
    // `ports` must outlive the table.
    dre_table(const dre_params& p, const std::vector<port>& ports) : _p(p), _ports(ports), _x(ports.size()) {}

    // Port `p` starts sending `bytes` at `now`.
    void add(port_id p, std::uint32_t bytes, common::time_ns now)
    {
        level(p, now); // decay first
        _x[p].bytes += bytes;
    }
    // The port's quantised load at `now`.
    std::uint8_t level(port_id p, common::time_ns now);

private:
    struct estimate {
        double bytes = 0;
        common::time_ns period_start = 0;
    };

    dre_params _p;
    const std::vector<port>& _ports;
    std::vector<estimate> _x;
};

} // namespace laps::fabric::schemes
