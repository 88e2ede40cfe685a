#include "fabric/progress.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unistd.h>

namespace laps::fabric {

void eta_estimator::add(double wall_s, double fraction)
{
    _samples.emplace_back(wall_s, fraction);
    // Keep one sample older than the window, so the window is always spanned.
    while (_samples.size() > 2 && wall_s - _samples[1].first >= _window_s) {
        _samples.pop_front();
    }
}

std::optional<double> eta_estimator::remaining() const
{
    if (_samples.size() < 2) {
        return std::nullopt;
    }
    const auto& [t0, f0] = _samples.front();
    const auto& [t1, f1] = _samples.back();
    if (f1 >= 1.0) {
        return 0.0;
    }
    if (f1 <= f0 || t1 <= t0) {
        return std::nullopt; // nothing delivered lately: no honest estimate
    }
    return (1.0 - f1) * (t1 - t0) / (f1 - f0);
}

std::string format_eta(std::optional<double> seconds)
{
    if (!seconds) {
        return "?";
    }
    const auto s = static_cast<long>(std::lround(*seconds));
    char buf[32];
    if (s < 60) {
        std::snprintf(buf, sizeof buf, "%ld s", s);
    } else if (s < 3600) {
        std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
    } else {
        std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, (s % 3600) / 60);
    }
    return buf;
}

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
    _eta.add(wall, fraction);
    std::fprintf(_out, "\r[%s] %5.1f%%  virtual %.3f ms  wall %.1f s  left ~%s   ", bar, 100 * fraction,
                 static_cast<double>(virtual_now) / 1e6, wall, format_eta(_eta.remaining()).c_str());
    std::fflush(_out);
    _drawn = true;
}

void progress_bar::finish()
{
    if (_drawn) {
        std::fprintf(_out, "\r%*s\r", 100, "");
        std::fflush(_out);
        _drawn = false;
    }
}

} // namespace laps::fabric
