#pragma once
// The app's one clock: nanoseconds since start, from the CPU's cycle counter.
//
// The engine never reads a clock; the worker loop reads this one once per
// iteration and passes `now` down (docs/design.md §6: time through one abstraction).
//
// Sources and their resolution:
//  - x86: the invariant TSC (rte_get_tsc_cycles, RDTSC), GHz, constant rate.
//  - Arm: rte_get_tsc_cycles reads the generic timer CNTVCT_EL0, which often
//    runs at 25-100 MHz (a tick of 10-40 ns); SmartNIC Arm cores are typical
//    examples. Good enough for path latencies of microseconds, but two
//    packets a few ns apart may read the same time. (A PMU cycle counter is
//    finer but needs a kernel module; not used.)
//  - NIC RX timestamps: where the fabric NIC stamps packets in hardware
//    (RTE_ETH_RX_OFFLOAD_TIMESTAMP, the mbuf timestamp dynfield), a receiver
//    could take a DATA packet's arrival time from the NIC instead of now():
//    the place is worker.cpp, before engine::from_fabric(). Both ends must
//    then use the NIC clock for their timestamps. Not done yet.
//
// Conversion: ns = (cycles - start) * mult >> 32 with a 128-bit product, so
// it is exact to the ns for years and costs a multiply on both targets.

#include "common/time.hpp"

#include <rte_cycles.h>

#include <sys/random.h>

#include <cstdint>
#include <ctime>
#include <random>

namespace laps::app {

class clock {
public:
    // Call after rte_eal_init (the cycle rate is measured there). `ahead_ns`:
    // where the clock starts (laps --clock-ahead-ms: a host whose clock is
    // not its peers', as tools/chaos restarts a sender an hour behind).
    explicit clock(common::time_ns ahead_ns = 0) noexcept
        : _hz(rte_get_tsc_hz()), _start(rte_get_tsc_cycles()),
          _mult(static_cast<std::uint64_t>((static_cast<unsigned __int128>(common::ns_per_s) << 32) / _hz)),
          _ahead(ahead_ns)
    {
    }

    common::time_ns now() const noexcept { return to_ns(rte_get_tsc_cycles()); }

    common::time_ns to_ns(std::uint64_t cycles) const noexcept
    {
        const auto d = static_cast<unsigned __int128>(cycles - _start);
        return _ahead + static_cast<common::time_ns>((d * _mult) >> 32);
    }

    std::uint64_t cycles() const noexcept { return rte_get_tsc_cycles(); }
    std::uint64_t cycles_for(common::time_ns ns) const noexcept
    {
        return static_cast<std::uint64_t>(static_cast<unsigned __int128>(ns) * _hz / common::ns_per_s);
    }
    std::uint64_t hz() const noexcept { return _hz; }
    // Nanoseconds per tick, rounded up: the resolution logged at start.
    std::uint64_t resolution_ns() const noexcept { return (common::ns_per_s + _hz - 1) / _hz; }

private:
    std::uint64_t _hz;
    std::uint64_t _start;
    std::uint64_t _mult; // ns per cycle, 32.32 fixed point
    common::time_ns _ahead;
};

// An engine's incarnation on the wire (the LAPS epoch, docs/wire-format.md
// "The epoch field"): 32 random bits from the kernel, drawn for every engine
// at every start. Not the wall clock: a forger cannot guess it, and a clock
// set back (NTP, a restored VM) cannot make a restart look older than the
// run before it. Receivers key their flows by it.
inline std::uint32_t random_epoch()
{
    std::uint32_t epoch = 0;
    // getrandom(2) of 4 bytes does not block once the kernel's pool is ready,
    // and is never cut short at this size.
    if (getrandom(&epoch, sizeof epoch, 0) != static_cast<ssize_t>(sizeof epoch)) {
        std::random_device device; // the same source through libstdc++, if the call is refused
        epoch = static_cast<std::uint32_t>(device());
    }
    return epoch;
}

} // namespace laps::app
