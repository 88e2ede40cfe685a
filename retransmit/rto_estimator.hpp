#pragma once
// A path's retransmission timeout from its measured round trips, as TCP's RTO
// follows SRTT and RTTVAR (RFC 6298 §2), beside Alg. 3's 2 x realVal.
//
// Alg. 3 times a path out when its ACKs stop for 2 x realVal. realVal is a
// one-way latency, and an ACK takes the reversed path, so 2 x realVal is the
// round trip with nothing to spare: a receiver that answers a few
// microseconds late (a busy lcore, a batched flush) or a return path a little
// slower than the forward one fires the timer on a loss-free link, and the
// path's whole window is resent. The estimator keeps the round trip's mean
// and variation from the ACKs that time one (Karn: never a resend's), and
// the timeout is the larger of the two rules, so a loss-free link with
// jitter resends nothing while a path that really went quiet is still given
// up within about one round trip plus four deviations.
//
// Integer arithmetic with RFC 6298's gains (alpha 1/8, beta 1/4, K = 4).

#include "common/time.hpp"

#include <algorithm>
#include <cstdint>

namespace laps::retransmit {

class rto_estimator {
public:
    // One measured round trip (ns, > 0).
    void on_rtt(common::time_ns rtt) noexcept
    {
        if (rtt <= 0) {
            return;
        }
        if (_srtt == 0) {
            _srtt = rtt; // RFC 6298 §2.2
            _rttvar = rtt / 2;
        } else {
            const common::time_ns error = rtt > _srtt ? rtt - _srtt : _srtt - rtt;
            _rttvar += (error - _rttvar) / 4; // §2.3: RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|
            _srtt += (rtt - _srtt) / 8;       //       SRTT <- 7/8 SRTT + 1/8 R'
        }
        _timeout = _srtt + std::max(granularity_ns, 4 * _rttvar);
    }

    bool measured() const noexcept { return _srtt != 0; }
    common::time_ns srtt() const noexcept { return _srtt; }
    common::time_ns rttvar() const noexcept { return _rttvar; }

    // SRTT + max(G, 4 RTTVAR), §2.3 (kept from the last sample: the data
    // path reads it for every packet); `initial` before the first sample.
    common::time_ns timeout_or(common::time_ns initial) const noexcept { return _srtt == 0 ? initial : _timeout; }

    void reset() noexcept { *this = rto_estimator{}; }

    // RFC 6298's G: the least margin over the smoothed round trip (the
    // engine's polling, not a clock tick, is what it covers).
    static constexpr common::time_ns granularity_ns = 1'000;

private:
    common::time_ns _srtt = 0;
    common::time_ns _rttvar = 0;
    common::time_ns _timeout = 0;
};

} // namespace laps::retransmit
