#pragma once
// A progress bar on stderr for long runs: bytes delivered of bytes offered,
// virtual time and wall time. Only for people watching (a TTY, or
// --progress); it never touches the result files.

#include "common/time.hpp"

#include <chrono>
#include <cstdio>

namespace laps::fabric {

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
    bool _drawn = false;
};

} // namespace laps::fabric
