#pragma once
// Per-flow rate control from path latencies: Alg. 2 of the paper (§III-F).
//
// On each ACK, with T = max baseVal and t = min realVal over the valid paths
// of the flow's destination:
//   t >  T : every path is slower than its worst baseline (in-cast or heavy
//            load): expRate = curRate, curRate /= 2, incStage = 0; at most
//            once per 2t.
//   t <= T : incStage += 1; after N stages expRate doubles on every further
//            increase (hyper increase, until a decrease resets incStage);
//            curRate moves halfway to expRate; at most once per 2t.
// The pseudo-code's `nxtDec > Now()` is a misprint for `Now() >= nxtDec`: the
// text allows one adjustment per window (docs/design.md §3.5).
// Rates are floored (a flow never stops) and capped at the NIC line rate;
// expRate is capped too, so hyper increase cannot grow without bound.
//
// Beside it, `fair` (docs/congestion.md): one queueing target for every flow
// instead of each flow's own T, a decrease in proportion to the excess, and
// an additive increase per unit of time, so that flows with one short path
// and flows with many long ones converge to the same rate at a shared
// bottleneck (Chiu & Jain 1989; the target of Swift, SIGCOMM 2020).

#include "common/time.hpp"
#include "congestion/pacer.hpp"

#include "common/names.hpp"

#include <algorithm>
#include <array>
#include <string_view>
#include <cstdint>
#include <optional>
#include <limits>

namespace laps::congestion {

using common::time_ns;

// Which rate control a flow runs: Alg. 2 as the paper writes it, the fair
// variant (on_ack_fair), or receiver-paced credits beside the fair variant's
// rate (credit_params; docs/congestion.md "Receiver-paced credits").
enum class cc_variant : std::uint8_t { paper, fair, credit };

// Their names in config (`congestion.cc`), on the console (`set cc`) and on
// the testbed's command line (`--cc`).
inline constexpr std::array cc_variant_names{
    common::named<cc_variant>{"paper", cc_variant::paper},
    common::named<cc_variant>{"fair", cc_variant::fair},
    common::named<cc_variant>{"credit", cc_variant::credit},
};

constexpr std::string_view to_string(cc_variant v) noexcept
{
    return common::name_of(cc_variant_names, v);
}

struct fair_params {
    // The queueing delay every flow aims at: a flow cuts its rate when even
    // its least queued fresh path is this much above its uncongested delay.
    time_ns target_queue_ns = 2'000;
    // The unit of time both adjustments refer to, so that they are the same
    // per unit of time whatever a flow's window (2t): an increase adds
    // increase_bps x 2t / interval_ns; a cut keeps (1 - c)^(2t / interval_ns)
    // of the rate, c = decrease_gain x (queue - target) / queue, at most
    // max_decrease, and a single cut never more than max_decrease.
    double increase_bps = 3e9; // 3 Gb/s per 10 us (docs/congestion.md, the sweep)
    time_ns interval_ns = 10'000;
    double decrease_gain = 0.8;
    double max_decrease = 0.5;
    // Swift's flow-based target scaling (SIGCOMM 2020): a flow's target
    // grows by up to this much as its rate falls from the cap to the floor,
    // in proportion to 1/sqrt(rate), so that a flow squeezed to a low rate
    // tolerates more queue than the flows that squeezed it. 0: off.
    time_ns flow_scaling_ns = 0;
    // A rate per path instead of one per flow, with a coupled increase
    // (congestion/coupled.hpp); the packets of a flow go to its paths in
    // proportion to their rates instead of by Eq. 1.
    bool coupled_paths = false;
};

// Receiver-paced credits (cc_variant::credit, docs/congestion.md
// "Receiver-paced credits", after EQDS, NSDI 2022): a flow sends its first
// `unscheduled_bytes` freely, then one DATA per credit its receiver grants;
// each DATA that leaves more to send asks for one (flag_pull), and the
// receiver grants a new flow's first request `window_bytes -
// unscheduled_bytes` more, paced like the others: a flow's DATA in flight
// and credits asked for come to `window_bytes` (about a round trip at the
// line rate) without a burst of that size at its start. The receiver keeps
// it there: it grants no flow more than that many credits past its DATA
// that arrived. A receiver grants in
// turn over its flows, paced so that the DATA the credits call fill
// `rate_fraction` of each receiving port. The fair variant's rate paces what
// no credit called (the unscheduled bytes, resends, a fallback); a flow that
// waits `fallback_ns` without a credit sends on that rate alone until one
// comes (lost credits, a receiver that does not grant).
// Receiving ports a receiver paces credits for apart, at most (a NIC's two).
inline constexpr std::uint32_t max_credit_ports = 2;

struct credit_params {
    std::uint32_t unscheduled_bytes = 32 * 1024;
    std::uint32_t window_bytes = 112 * 1024;
    double rate_fraction = 0.98;
    double downlink_bps = 0; // the receiver's ports together; 0: the line rate (cap_bps)
    // Receiving ports paced apart (at downlink_bps / ports each), by the
    // mbuf's port modulo this; each port's credits name the path of a DATA
    // that came in through it, and the sender sends the DATA a credit calls
    // on that path, so that each port gets what its credits call.
    std::uint32_t ports = 1;
    time_ns fallback_ns = 100'000;
    // Whether the fabric is lossless (PFC): a port's overload is then
    // paused upstream, not dropped, and the credits fill the port with
    // DATA. On a lossy fabric (not set: false) what else comes in through a
    // busy port (probes, answers, credits) takes its share of the turns, so
    // that the DATA called do not overflow the port's queue.
    std::optional<bool> lossless_fabric;
};

// The credits a receiver grants a flow's first request beyond it, and its
// sender accepts: the window past the unscheduled bytes, in DATA of the
// length of the one that asked (both sides count the same packet).
inline std::uint32_t credit_window_grants(const credit_params& p, std::uint32_t wire_bytes) noexcept
{
    return p.window_bytes > p.unscheduled_bytes && wire_bytes > 0 ? (p.window_bytes - p.unscheduled_bytes) / wire_bytes
                                                                  : 0;
}

struct aimd_params {
    cc_variant variant = cc_variant::paper;
    fair_params fair;
    credit_params credit;
    std::uint32_t increase_stages = 5; // N
    double floor_bps = 1e8;            // 100 Mb/s
    double cap_bps = 100e9;            // line rate
    // Departures of the LAPS authors' ns-3 model (github.com/wany16/Laps-ns3,
    // rdma-hw.cc IncreaseRateForLaps / UpdateRateForLaps), off by default so
    // the paper's Alg. 2 runs; docs/EVALUATION.md measures each:
    double min_increase_bps = 0;      // an increase raises the rate by at least this (artefact: 1 Gb/s)
    bool increase_window_T = false;   // one increase per 2T (max baseVal) instead of per 2t
};

enum class aimd_action : std::uint8_t { none, decrease, increase, hyper_increase };

// now + 2t, without overflow (t can be huge when every path timed out).
inline time_ns window_end(time_ns now, time_ns t) noexcept
{
    const time_ns max = std::numeric_limits<time_ns>::max();
    if (t > (max - now) / 2) {
        return max;
    }
    return now + 2 * t;
}

// The fair variant's parts, shared by the per-flow rate (aimd::on_ack_fair)
// and the per-path rates (coupled.hpp).

// t bounded for the windows and steps: a flow that measured milliseconds (PFC
// back-pressure, paths that timed out) would otherwise wait 2t after a cut
// before it may increase again, longer than a collective lasts, and jump to
// the cap in one step when it does (docs/congestion.md "The `fair` variant",
// item 4: no starvation).
inline time_ns fair_bounded_t(time_ns t, const fair_params& f) noexcept
{
    return t < 100 * f.interval_ns ? t : 100 * f.interval_ns;
}
// The queueing target of a flow at `rate_bps`: the plain target, or with
// flow scaling on, the scaled one (out of line: square roots).
time_ns fair_scaled_target(const aimd_params& p, double rate_bps) noexcept;
inline time_ns fair_target(const aimd_params& p, double rate_bps) noexcept
{
    return p.fair.flow_scaling_ns <= 0 ? p.fair.target_queue_ns : fair_scaled_target(p, rate_bps);
}
// A window 2t in intervals: the unit both adjustments are scaled by.
inline double fair_intervals(const fair_params& f, time_ns t) noexcept
{
    return 2.0 * static_cast<double>(t) / static_cast<double>(f.interval_ns);
}
// The part of the rate a cut keeps at `queue` above `target`, window 2t.
double fair_keep(const fair_params& f, time_ns queue, time_ns target, time_ns t) noexcept;
// The increase for window 2t, doubled per interval past N intervals of
// increases since `increasing_since` (hyper increase, counted in time).
struct fair_increase {
    double step_bps = 0;
    std::uint64_t stages = 0;
    bool hyper = false;
};
inline fair_increase fair_step(const aimd_params& p, time_ns t, time_ns now, time_ns increasing_since) noexcept
{
    // The step is per unit of time, not per window: a flow whose window (2t)
    // is three times longer adds three times as much per increase, so rates
    // grow alike whatever the paths' lengths. Hyper increase is counted in
    // time too: after N intervals of increases without a cut the step
    // doubles with each further interval, so a flow at its floor regains an
    // idle line within about (N + log2(cap / step) + 1) intervals; counted in
    // increases, a flow with a short window would reach it first and take
    // the bottleneck.
    const fair_params& f = p.fair;
    fair_increase out;
    out.step_bps = f.increase_bps * fair_intervals(f, t);
    out.stages = static_cast<std::uint64_t>((now - increasing_since) / f.interval_ns) + 1;
    if (out.stages > p.increase_stages) {
        const auto doublings = static_cast<std::uint32_t>(std::min<std::uint64_t>(out.stages - p.increase_stages, 30));
        out.step_bps *= static_cast<double>(1u << doublings);
        out.hyper = true;
    }
    return out;
}

class aimd {
public:
    // A new flow starts at the line rate (§III-F: "initialized to the maximum
    // sending rate allowed by the NIC rate limiter").
    explicit aimd(const aimd_params& p) noexcept
        : _cur_bps(p.cap_bps), _exp_bps(p.cap_bps), _pace(pace_rate::from_bps(p.cap_bps))
    {
    }
    aimd(double cur_bps, double exp_bps) noexcept
        : _cur_bps(cur_bps), _exp_bps(exp_bps), _pace(pace_rate::from_bps(cur_bps))
    {
    }

    // T and t as above, in ns; `now` in ns.
    aimd_action on_ack(const aimd_params& p, time_ns now, time_ns max_base_T, time_ns min_real_t) noexcept;
    // The fair variant. `min_real_t` as above (it sets the window, 2t);
    // `queue` the congestion signal: the smallest queueing delay (realVal -
    // uncongested delay) over the flow's fresh valid paths.
    aimd_action on_ack_fair(const aimd_params& p, time_ns now, time_ns min_real_t, time_ns queue) noexcept;

    double rate_bps() const noexcept { return _cur_bps; }
    // The fair variant with coupled paths sets the flow's rate to the sum
    // of its paths' (congestion/coupled.hpp).
    void set_total(double bps) noexcept
    {
        _exp_bps = bps;
        set_rate(bps);
    }
    // The same rate for a pacer (fixed point), converted when it changes,
    // not per packet.
    pace_rate pace() const noexcept { return _pace; }
    double expected_bps() const noexcept { return _exp_bps; }
    std::uint32_t stage() const noexcept { return _inc_stage; }

private:
    // Both variants' decrease: expRate = curRate, curRate x keep (floored),
    // the next decrease not before now + 2t, the increase stages restart.
    void cut(const aimd_params& p, time_ns now, time_ns min_real_t, double keep) noexcept;
    void set_rate(double bps) noexcept
    {
        _cur_bps = bps;
        _pace = pace_rate::from_bps(bps);
    }

    double _cur_bps;
    double _exp_bps;
    pace_rate _pace;
    time_ns _next_dec = 0;
    time_ns _next_inc = 0;
    std::uint32_t _inc_stage = 0;
    time_ns _increasing_since = -1; // fair: the first increase since the last cut (-1: none yet)
};

} // namespace laps::congestion
