#pragma once
// An emulated fabric between two or more instances of one process (net_ring
// mode): a link lcore takes what each instance's fabric port sends (the TX
// rings of its net_ring port), copies it into the link's own mempool as a NIC
// would receive it, holds it for the delay of its path, and delivers it to
// the instance it is addressed to (outer destination IP; with two instances,
// what matches neither goes to the other), in the fabric RX ring of the
// worker that owns it (steering tag % workers: the link plays the NIC's
// rte_flow role).
//
// Delay: per pid from `link.paths` (LAPS DATA, PROBE, and their ACKs, which
// return on the reversed path of the same pid), `default_delay_us` for the
// rest, plus a uniform [0, jitter_us) per packet; a pid's `loss` drops that
// share of its packets (counted). Each pid has its own queue ordered by due
// time, then arrival: without jitter packets leave in order, with it they
// may overtake each other as on a real fabric. With `rate_gbps` each
// instance's receiving port then serialises what is due for it, in order,
// behind a queue of ring_size packets: several senders into one instance
// share its port as an in-cast shares a switch's downlink. Time is the TSC
// (app/run/clock.hpp): delays are as precise as the link lcore is scheduled;
// give it a core of its own for delays of a few microseconds.

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
    std::uint64_t drop_port_full = 0; // the receiving port's queue (link.rate_gbps) was full

    bool any() const noexcept { return forwarded + drop_full + drop_no_mbuf + drop_loss + drop_port_full != 0; }
};

class link {
public:
    link(const link_config& config, std::vector<link_side> sides, const clock& clk, const std::atomic<bool>& stop,
         idle_mode idle);
    ~link();
    link(const link&) = delete;
    link& operator=(const link&) = delete;

    int run() noexcept;
    static int launch(void* self) noexcept { return static_cast<link*>(self)->run(); }

    // Read after the lcore returned.
    std::size_t sides() const noexcept { return _side.size(); }
    const link_counters& counters(std::size_t from, std::size_t to) const noexcept
    {
        return _counters[from * _side.size() + to];
    }
    const std::string& side_name(std::size_t side) const noexcept { return _side[side].name; }
    // Packets from an instance addressed to none of the others (outer
    // destination IP), with three or more instances.
    std::uint64_t drop_no_route() const noexcept { return _drop_no_route; }
    unsigned mbufs_in_use() const;
    std::string pool_name() const;
    // Frees what is still in flight (after the lcore returned).
    void clear() noexcept;

private:
    struct held {
        std::uint64_t due = 0;   // TSC cycles
        std::uint64_t order = 0; // arrival: ties leave first come, first out
        rte_mbuf* m = nullptr;
        std::uint16_t from = 0;
        std::uint16_t to = 0;
    };
    struct lane {
        std::uint64_t delay_cycles = 0;
        std::uint64_t jitter_cycles = 0;
        std::uint64_t loss_threshold = 0; // of a 64-bit random draw; 0: none
        std::vector<held> queue; // a min-heap on (due, order), reserved at ring_size
    };
    // An instance's receiving port with a rate: a FIFO (a ring over `slots`)
    // and when the port is done with the packet before its head.
    struct port_queue {
        std::vector<held> slots;
        std::size_t head = 0;
        std::size_t count = 0;
        std::uint64_t free_at = 0; // TSC cycles
    };

    void take(std::size_t from) noexcept;
    // Where a packet from `from` goes: the side its outer destination IP
    // names; with two sides, the other one whatever it names. -1: nowhere.
    int destination(std::size_t from, const rte_mbuf* m, const wire::parse_result& r) const noexcept;
    void hand_over(const held& h) noexcept;
    void deliver(std::uint64_t now) noexcept;
    void serve_ports(std::uint64_t now) noexcept;
    link_counters& pair(std::size_t from, std::size_t to) noexcept { return _counters[from * _side.size() + to]; }

    link_config _config;
    std::vector<link_side> _side;
    const clock& _clock;
    const std::atomic<bool>& _stop;
    idle_mode _idle;
    mempool_ptr _pool;
    std::vector<std::uint16_t> _lane_of; // by pid; 0 = default lane
    std::vector<lane> _lanes;             // 0: default delay
    std::size_t _lane_limit = 0;          // packets a lane holds at most
    std::vector<port_queue> _ports;       // by side, with link.rate_gbps
    double _cycles_per_byte = 0;          // at link.rate_gbps
    std::vector<link_counters> _counters; // by (from, to)
    std::uint64_t _forwarded = 0;
    std::uint64_t _drop_no_route = 0;
    std::uint64_t _arrivals = 0;
    common::rng _rng;
};

} // namespace laps::app
