#pragma once
// Hopper (seed 002, §3): host-based single-path load balancing for RDMA. A
// flow keeps one path (one UDP source port: ECMP picks the path) and watches
// the moving average of its RTT over control epochs of one RTT:
//   - above th_prob x base RTT it probes two random alternative entropies it
//     has not probed within ttl_prob (power of two choices, "Probe
//     Initiation");
//   - above th_cong x base RTT it moves to the better probed alternative, but
//     only when that one is clearly better: its RTT below `switch_margin` x the
//     current average ("Path Selection");
//   - the first packet on the new path waits the RTT difference, so packets of
//     the new path do not overtake those still on the old one ("Reducing
//     Out-of-Order Packets").
// Simplified against the paper: the wait is the difference between the last
// RTT sample of the old path and the probe's RTT (the paper extrapolates the
// old path's RTT by a linear regression over the epoch's samples); the
// epoch's average is the mean of its samples mixed into the previous average
// with `ewma_gain` (Table 1 lists 1: the last epoch alone).
//
// Pure state, time passed in (fabric/roce_loop.cpp runs it in the testbed).

#include "common/rng.hpp"
#include "common/time.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace laps::policy {

using common::time_ns;

struct hopper_config {
    time_ns base_rtt_ns = 0;
    double probe_threshold = 1.5;      // th_prob, x base RTT (Table 1)
    double congestion_threshold = 2.5; // th_cong, x base RTT (Table 1)
    double probe_ttl = 4.0;            // ttl_prob, x base RTT (Table 1)
    double ewma_gain = 1.0;            // weight of the last epoch's mean
    double switch_margin = 0.8;        // switch only to a path with RTT < margin x current
    std::uint16_t entropies = 256;     // UDP source ports to choose from
};

// What the sender does after an RTT sample.
struct hopper_decision {
    std::uint8_t probes = 0;              // probes to send now, on these entropies
    std::array<std::uint16_t, 2> probe{};
    bool switched = false;                // data moves to `entropy` after `delay_ns`
    std::uint16_t entropy = 0;
    time_ns delay_ns = 0;
};

class hopper {
public:
    hopper(const hopper_config& c, std::uint16_t first_entropy);

    std::uint16_t current() const noexcept { return _current; }
    time_ns average_rtt() const noexcept { return _average; }
    std::uint64_t switches() const noexcept { return _switches; }
    std::uint64_t probes_sent() const noexcept { return _probes_sent; }

    // An ACK of a DATA packet sent on `entropy` measured `rtt` (samples of an
    // old path after a switch are ignored).
    hopper_decision on_rtt(std::uint16_t entropy, time_ns rtt, time_ns now, common::rng& random);
    // A probe on `entropy` came back after `rtt`.
    void on_probe(std::uint16_t entropy, time_ns rtt, time_ns now);

private:
    struct probed {
        time_ns at = -1; // when the probe was sent (ttl) ; -1: never
        time_ns rtt = 0;
        bool answered = false;
    };
    hopper_decision end_epoch(time_ns now, common::rng& random);

    hopper_config _config;
    std::uint16_t _current;
    time_ns _average = 0;
    time_ns _last_sample = 0;
    time_ns _epoch_start = -1;
    time_ns _epoch_sum = 0;
    std::uint32_t _epoch_samples = 0;
    time_ns _probing_until = 0; // probes in flight: no new ones before this
    std::vector<probed> _probed; // per entropy
    std::uint64_t _switches = 0;
    std::uint64_t _probes_sent = 0;
};

} // namespace laps::policy
