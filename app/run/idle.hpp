#pragma once
// What a polling lcore does with an iteration that found no work
// (lcores.idle, docs/app.md "Lcores"):
//   spin   nothing: the lowest latency, a core per lcore;
//   yield  sched_yield(): lcores sharing a core take turns;
//   sleep  yield, and after `sleep_after` idle iterations in a row a short
//          nanosleep: an idle laps leaves its cores to other programs (the
//          hosts' TCP stacks when laps and the hosts share a machine, as
//          with tools/tap-pair), at the cost of a wake-up when work comes.

#include "app/config/config.hpp"

#include <sched.h>
#include <time.h>

#include <cstdint>

namespace laps::app {

class idler {
public:
    explicit idler(idle_mode mode) noexcept : _mode(mode) {}

    void after(bool busy) noexcept
    {
        if (_mode == idle_mode::spin) {
            return;
        }
        if (busy) {
            _idle = 0;
            return;
        }
        if (_mode == idle_mode::sleep && ++_idle > sleep_after) {
            const timespec nap{0, sleep_ns};
            nanosleep(&nap, nullptr);
            return;
        }
        sched_yield();
    }

    static constexpr std::uint32_t sleep_after = 32;
    static constexpr long sleep_ns = 20'000;

private:
    idle_mode _mode;
    std::uint32_t _idle = 0;
};

} // namespace laps::app
