#pragma once
// An emulated fabric between two instances of one process (net_ring mode):
// a link lcore takes what each instance's fabric port sends (the TX rings of
// its net_ring port), copies it into the link's own mempool as a NIC would
// receive it, holds it for the delay of its path, and delivers it to the
// other instance's fabric RX ring of the worker that owns it (steering tag %
// workers: the link plays the NIC's rte_flow role).
//
// Delay: per pid from `link.paths` (LAPS DATA, PROBE, and their ACKs, which
// return on the reversed path of the same pid), `default_delay_us` for the
// rest, plus a uniform [0, jitter_us) per packet; a pid's `loss` drops that
// share of its packets (counted). Each pid has its own queue ordered by due
// time, then arrival: without jitter packets leave in order, with it they
// may overtake each other as on a real fabric. Time is the TSC (app/run/clock.hpp):
// delays are as precise as the link lcore is scheduled; give it a core of its
// own for delays of a few microseconds.

#include "app/run/clock.hpp"
#include "app/config/config.hpp"
#include "app/run/instance.hpp"
#include "app/ports/mempools.hpp"
#include "common/rng.hpp"

#include <atomic>
#include <vector>

namespace laps::app {

struct link_counters {
    std::uint64_t forwarded = 0;  // delivered to the other side
    std::uint64_t drop_full = 0;  // a delay FIFO or the receiver's ring was full
    std::uint64_t drop_no_mbuf = 0; // the link's mempool was empty
    std::uint64_t drop_loss = 0;    // lost on purpose: link.paths[].loss
};

class link {
public:
    link(const link_config& config, link_side a, link_side b, const clock& clk, const std::atomic<bool>& stop,
         idle_mode idle);
    ~link();
    link(const link&) = delete;
    link& operator=(const link&) = delete;

    int run() noexcept;
    static int launch(void* self) noexcept { return static_cast<link*>(self)->run(); }

    // Read after the lcore returned. Direction 0: a -> b, 1: b -> a.
    const link_counters& counters(int direction) const noexcept { return _dir[direction].counters; }
    const std::string& side_name(int side) const noexcept { return _side[side].name; }
    unsigned mbufs_in_use() const;
    std::string pool_name() const;
    // Frees what is still in flight (after the lcore returned).
    void clear() noexcept;

private:
    struct held {
        std::uint64_t due = 0;   // TSC cycles
        std::uint64_t order = 0; // arrival: ties leave first come, first out
        rte_mbuf* m = nullptr;
    };
    struct lane {
        std::uint64_t delay_cycles = 0;
        std::uint64_t jitter_cycles = 0;
        std::uint64_t loss_threshold = 0; // of a 64-bit random draw; 0: none
        std::vector<held> queue; // a min-heap on (due, order), reserved at ring_size
    };
    struct direction {
        std::vector<lane> lanes;               // 0: default delay
        link_counters counters;
    };

    void take(int dir) noexcept;
    void deliver(int dir, std::uint64_t now) noexcept;

    link_config _config;
    link_side _side[2];
    const clock& _clock;
    const std::atomic<bool>& _stop;
    idle_mode _idle;
    mempool_ptr _pool;
    std::vector<std::uint16_t> _lane_of; // by pid; 0 = default lane
    direction _dir[2];
    std::uint64_t _arrivals = 0;
    common::rng _rng;
};

} // namespace laps::app
