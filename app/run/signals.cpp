#include "app/run/signals.hpp"

#include <csignal>

namespace laps::app {

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal flag must be lock-free");

struct sigaction g_old_int{};
struct sigaction g_old_term{};

extern "C" void on_signal(int sig)
{
    if (g_signal.exchange(sig) != 0) {
        std::signal(sig, SIG_DFL);
        std::raise(sig);
    }
}

} // namespace

signal_guard::signal_guard()
{
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &g_old_int);
    sigaction(SIGTERM, &sa, &g_old_term);
}

signal_guard::~signal_guard()
{
    sigaction(SIGINT, &g_old_int, nullptr);
    sigaction(SIGTERM, &g_old_term, nullptr);
}

int signal_guard::received() noexcept
{
    return g_signal.load();
}

std::string signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : std::to_string(sig);
}

} // namespace laps::app
