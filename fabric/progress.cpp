#include "fabric/progress.hpp"

#include <algorithm>
#include <unistd.h>

namespace laps::fabric {

progress_bar::progress_bar(std::FILE* out) : _out(out), _start(std::chrono::steady_clock::now()) {}

bool progress_bar::stderr_is_tty() noexcept
{
    return isatty(STDERR_FILENO) == 1;
}

void progress_bar::update(double fraction, common::time_ns virtual_now)
{
    constexpr int width = 30;
    fraction = std::clamp(fraction, 0.0, 1.0);
    const int filled = static_cast<int>(fraction * width);
    char bar[width + 1];
    for (int i = 0; i < width; ++i) {
        bar[i] = i < filled ? '#' : '.';
    }
    bar[width] = '\0';
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - _start).count();
    std::fprintf(_out, "\r[%s] %5.1f%%  virtual %.3f ms  wall %.1f s ", bar, 100 * fraction,
                 static_cast<double>(virtual_now) / 1e6, wall);
    std::fflush(_out);
    _drawn = true;
}

void progress_bar::finish()
{
    if (_drawn) {
        std::fprintf(_out, "\r%*s\r", 72, "");
        std::fflush(_out);
        _drawn = false;
    }
}

} // namespace laps::fabric
