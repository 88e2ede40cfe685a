#pragma once
// DCQCN's reaction point (Zhu et al., SIGCOMM 2015, Fig. 4 and §3), as the
// HPCC ns-3 artefact and those built on it implement it (rdma-hw.cc,
// "Mellanox version"; docs/testbed.md, Schemes):
//
//   - CNP: alpha's "CNP arrived" bit and the decrease bit are set; the first
//     CNP of a QP sets alpha = 1 and starts the alpha and decrease clocks.
//   - alpha clock (every alpha_interval): alpha = (1-g) alpha + g if a CNP
//     arrived since the last tick, else (1-g) alpha.
//   - decrease clock (every decrease_interval, 1 ns after an alpha tick): if a
//     CNP arrived, target = rate (unless in the first stage and not clamping),
//     rate = max(min, rate (1 - alpha/2)), the increase stage restarts and the
//     rate-increase timer is reset.
//   - rate-increase timer (every rp_timer after a decrease) and, if enabled,
//     the byte counter: fast recovery (rate halfway to target) for the first F
//     stages, then additive (target += AI) at stage F, then hyper (target +=
//     HAI); the rate moves halfway to the target each time.
//
// Time is passed in; the clocks are evaluated lazily (exactly as the periodic
// events would), so a QP costs an event only when something can change: one
// per decrease check and one per rate-increase period.

#include "fabric/event_queue.hpp"
#include "fabric/hosts/roce_params.hpp"

#include <cstdint>

namespace laps::fabric::hosts {

class dcqcn_rp {
public:
    dcqcn_rp() = default;
    dcqcn_rp(const dcqcn_params& p, double line_rate_bps) noexcept;

    double rate_bps() const noexcept { return _rate; }
    double target_bps() const noexcept { return _target; }
    // alpha as the alpha clock has it at `now`.
    double alpha(time_ns now) noexcept;

    // A CNP reached the QP at `now`. Returns when the next decrease check is
    // due if one must be scheduled, else no_time (one is already pending).
    time_ns on_cnp(time_ns now) noexcept;
    // The decrease check scheduled by on_cnp. True when the rate was cut.
    bool on_decrease_check(time_ns now) noexcept;
    // When the rate-increase timer fires next (no_time: not running).
    time_ns rp_timer_due() const noexcept { return _rp_due; }
    // The rate-increase timer fired at `now` (== rp_timer_due()).
    void on_rp_timer(time_ns now) noexcept;
    // `bytes` left the QP; runs the byte counter's increase when it expires.
    void on_bytes_sent(std::uint32_t bytes) noexcept;

    std::uint64_t cnps() const noexcept { return _cnps; }
    std::uint64_t decreases() const noexcept { return _decreases; }
    std::uint64_t increases() const noexcept { return _increases; }

private:
    void increase() noexcept;
    void advance_alpha(time_ns now) noexcept;

    const dcqcn_params* _p = nullptr;
    double _line = 0;
    double _rate = 0;
    double _target = 0;
    double _alpha = 1.0;
    bool _started = false;       // first CNP seen
    time_ns _origin = 0;         // first CNP: the clocks' phase
    std::uint64_t _alpha_ticks = 0; // alpha ticks applied (tick k at origin + k x interval)
    bool _alpha_cnp = false;     // a CNP since the last applied alpha tick
    bool _decrease_cnp = false;  // a CNP since the last decrease check
    bool _check_pending = false;
    time_ns _rp_due = no_time;
    std::uint32_t _timer_stage = 0;
    std::uint32_t _byte_stage = 0;
    std::uint64_t _byte_count = 0;
    std::uint64_t _cnps = 0;
    std::uint64_t _decreases = 0;
    std::uint64_t _increases = 0;
};

// The artefact's DCTCP for RoCE (rdma-hw.cc HandleAckDctcp): per ACK; the
// rate is cut at most once per window of data (CWR), alpha is updated and
// the rate raised additively once per window.
class dctcp_cc {
public:
    dctcp_cc() = default;
    dctcp_cc(const dctcp_params& p, double line_rate_bps) noexcept : _p(&p), _line(line_rate_bps), _rate(line_rate_bps) {}

    double rate_bps() const noexcept { return _rate; }
    double alpha() const noexcept { return _alpha; }

    struct ack_result {
        bool new_round = false; // a window of data was acknowledged (a scheme may look at `fraction`)
        double fraction = 0;    // share of the round's ACKs that echoed ECN
        bool cut = false;
    };
    // An ACK acknowledging up to `ack_psn` (exclusive), with the sender at
    // `snd_nxt`; `ecn_echo`: the acknowledged packet was CE-marked.
    ack_result on_ack(std::uint32_t ack_psn, std::uint32_t snd_nxt, bool ecn_echo) noexcept;

private:
    const dctcp_params* _p = nullptr;
    double _line = 0;
    double _rate = 0;
    double _alpha = 1.0;
    std::uint32_t _last_update = 0;
    std::uint32_t _ecn_count = 0;
    std::uint32_t _batch = 1;
    bool _cwr = false;
    std::uint32_t _high_seq = 0;
};

} // namespace laps::fabric::hosts
