#pragma once
// The fair variant's per-path rates (`congestion.fair.coupled_paths`,
// docs/congestion.md "Coupled paths"): a flow keeps one rate per path of its
// set; its packets go to a path in proportion to that path's rate and its
// pacer runs at their sum.
//
// Each ACK acts on its own path only, with that path's queue (realVal -
// uncongested delay, just measured):
//   - above the target: the path's rate is cut as the fair variant cuts a
//     flow (in proportion to the excess, per unit of time, once per window
//     2 x the path's realVal);
//   - at or below it: the path's rate grows by the fair variant's step
//     times the path's share of the flow's rate, once per window. Summed
//     over the paths the flow grows by one step: it takes no more at a
//     shared bottleneck than a flow with one path (MPTCP's coupled
//     increase, RFC 6356), and the traffic moves to the paths that are cut
//     less often (Kelly & Voice 2005: the least congested).
// So a flow with eight paths, seven of which end at an in-cast root's
// congested port, moves its traffic to the eighth until both ports queue
// alike, where Eq. 1's latency softmax holds about a quarter on it.
// Also: an increase never takes the flow past the line rate (a flow whose
// NIC is its bottleneck keeps its split); after N intervals without a cut on
// any path the steps double with each further interval (the flow variant's
// bounded recovery, counted for the flow, not per path); a path's rate is
// floored at the flow floor / paths, so every path keeps carrying packets
// and measuring; a timeout halves its path (a failed link answers no ACK).

#include "common/time.hpp"
#include "congestion/aimd.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace laps::congestion {

inline constexpr std::size_t max_coupled_paths = 16;

class coupled_rates {
public:
    // A flow at `bps` (a new one: the line rate), split evenly over `paths` paths.
    void start(std::uint8_t paths, double bps) noexcept;
    // The same, split in proportion to `weights` (Eq. 1's, per slot; all 0:
    // evenly), each path at least its share of the flow floor.
    void start(const aimd_params& p, std::uint8_t paths, double bps, const std::uint32_t* weights) noexcept;

    // An ACK on path `slot`: its realVal and queue (ns). Returns what it did
    // to that path's rate.
    aimd_action on_ack(const aimd_params& p, std::uint8_t slot, time_ns now, time_ns real, time_ns queue) noexcept;

    // Path `slot` timed out (Alg. 3): its packets were lost without an ACK,
    // so no queue can be measured; its rate is cut by max_decrease.
    void on_timeout(const aimd_params& p, std::uint8_t slot) noexcept;

    // The sum of the rates of the paths in `usable` (bit per slot), capped
    // at the line rate.
    double total_bps(const aimd_params& p, std::uint32_t usable) const noexcept;
    // A path in proportion to rate x factor (per slot; 0: not usable, see
    // latency_factor); `random32` uniform. -1 when every product is 0.
    int draw(const std::array<double, max_coupled_paths>& factors, std::uint32_t random32) const noexcept;

    // A path's factor in the draw: 1 while its realVal is within
    // stale_factor x its uncongested delay, then (stale_factor x
    // uncongested / realVal)^2. A failed path answers no ACK that could cut
    // its rate, and while packets go on it its timeout never fires (each
    // send restarts it); Alg. 1 doubles its realVal at each probe, and this
    // takes it out of use as Eq. 1 does. A queue of a few times a path's
    // delay leaves the factor at 1: moving traffic is the rates' business.
    static constexpr double stale_factor = 4.0;
    static double latency_factor(time_ns real, time_ns uncongested) noexcept;

    double path_bps(std::uint8_t slot) const noexcept { return _bps[slot]; }
    std::uint8_t paths() const noexcept { return _paths; }

private:
    double sum() const noexcept;

    std::uint8_t _paths = 0;
    std::array<double, max_coupled_paths> _bps{};
    std::array<time_ns, max_coupled_paths> _next_dec{};
    std::array<time_ns, max_coupled_paths> _next_inc{};
    time_ns _increasing_since = -1; // no path cut since (-1: a cut since the last increase)
    std::array<time_ns, max_coupled_paths> _last_action{};
};

} // namespace laps::congestion
