#pragma once
// SIGINT and SIGTERM ask the app to stop (installed in main, before EAL, so
// a signal during start-up is kept too): the handler only stores the signal
// number (a lock-free atomic, async-signal-safe); the control lcore sees it,
// stops the workers, drains and reports. A second signal while stopping
// restores the default action, so it ends the process.

#include <atomic>
#include <string>

namespace laps::app {

class signal_guard {
public:
    signal_guard();  // installs the handlers
    ~signal_guard(); // restores the previous ones
    signal_guard(const signal_guard&) = delete;
    signal_guard& operator=(const signal_guard&) = delete;

    // 0, or the signal that asked to stop.
    static int received() noexcept;
};

// "SIGINT", "SIGTERM", or the number.
std::string signal_name(int sig);

} // namespace laps::app
