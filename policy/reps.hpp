#pragma once
// REPS, Recycled Entropy Packet Spraying (seed 001, §3 Algorithm 1): a
// per-packet entropy (an ECMP fabric's UDP source port, a source-routed
// fabric's path id) chosen by a sender from what its ACKs said about earlier
// packets. The first BDP of packets explores every entropy in turn; after
// that each packet reuses the oldest entropy an unmarked ACK returned (a
// circular buffer of `cache_size`), and only when none is cached does it try
// the next unexplored one. A marked ACK's entropy is simply not recycled.
//
// Failures (§4.3, and the freezing mode of the full REPS paper): a timeout
// means a path may be broken, not congested, so exploring new entropies is
// the riskiest thing to do. Frozen, the sender still takes the cached
// entropies oldest first, but with an empty cache it sends again on the last
// entropy an unmarked ACK returned instead of exploring; the freeze ends
// `freeze_ns` after the last timeout. (The seed's workshop version only
// states the result, §4.3: REPS avoids failing links where spraying keeps
// choosing them; the freeze is this model's reading of the full paper.)
//
// Pure state, time passed in: the same object runs in the testbed's RoCE
// hosts (fabric/schemes/reps.cpp, one per QP) and in the engine's
// selector (softmax/selector.hpp, one per path set), and is testable alone.

#include "common/time.hpp"

#include <array>
#include <cstdint>

namespace laps::policy {

using common::time_ns;

struct reps_config {
    std::uint16_t entropies = 256;    // num_entropies (Algorithm 1 line 1)
    std::uint16_t cache_size = 8;     // cached_buffer_size (line 3; the authors' code: 8)
    std::uint32_t explore_packets = 0; // the first BDP of packets, in packets
    time_ns freeze_ns = 0;            // how long a timeout freezes exploration; 0: never
};

class reps {
public:
    static constexpr std::uint16_t max_cache = 64;

    explicit reps(const reps_config& c) noexcept;

    // REPS_ONSEND: the entropy of the packet with sequence number `seq`.
    std::uint16_t on_send(std::uint32_t seq, time_ns now) noexcept;
    // REPS_ONRECV: an ACK returned `entropy`, CE-marked or not.
    void on_ack(std::uint16_t entropy, bool ecn_marked) noexcept;
    // A retransmission timeout: the freezing mode starts (or is extended).
    void on_timeout(time_ns now) noexcept;

    bool frozen(time_ns now) const noexcept { return now < _frozen_until; }
    std::uint16_t cached() const noexcept { return _count; }
    std::uint32_t explored() const noexcept { return _explored; }
    std::uint64_t recycled() const noexcept { return _recycled; }

private:
    std::uint16_t next_unexplored() noexcept;

    reps_config _config;
    std::array<std::uint16_t, max_cache> _ring{};
    std::uint16_t _head = 0;  // oldest cached entropy
    std::uint16_t _count = 0;
    std::uint16_t _last_good = 0;   // the newest entropy an unmarked ACK returned
    bool _has_last_good = false;
    std::uint16_t _next_entropy = 0;
    std::uint32_t _explored = 0;   // entropies handed out by exploration
    std::uint64_t _recycled = 0;   // packets sent on a recycled entropy
    time_ns _frozen_until = 0;
};

} // namespace laps::policy
