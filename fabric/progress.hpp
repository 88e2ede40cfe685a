#pragma once
// A progress bar on stderr for long runs: bytes delivered of bytes offered,
// virtual time, wall time and an estimate of the wall time left. Only for
// people watching (a TTY, or --progress); it never touches the result files.

#include "common/time.hpp"

#include <chrono>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>
#include <utility>

namespace laps::fabric {

// The wall time left, from how fast the fraction done grew lately: the rate
// over the last `window_s` seconds of samples (a run slows down or speeds up
// as its load changes, so the whole-run average misleads), or over the whole
// run while it is younger than that.
class eta_estimator {
public:
    explicit eta_estimator(double window_s = 10.0) : _window_s(window_s) {}

    void add(double wall_s, double fraction);
    // Seconds left; nullopt until the fraction has moved.
    std::optional<double> remaining() const;

private:
    double _window_s;
    std::deque<std::pair<double, double>> _samples; // (wall s, fraction)
};

class progress_bar {
public:
    explicit progress_bar(std::FILE* out = stderr);
    // Whether stderr is a terminal.
    static bool stderr_is_tty() noexcept;

    void update(double fraction, common::time_ns virtual_now);
    // Clears the line (call once at the end).
    void finish();

private:
    std::FILE* _out;
    std::chrono::steady_clock::time_point _start;
    eta_estimator _eta;
    bool _drawn = false;
};

// "12 s", "3 min 05 s", "1 h 02 min"; "?" for nullopt.
std::string format_eta(std::optional<double> seconds);

} // namespace laps::fabric
