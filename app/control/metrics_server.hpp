#pragma once
// A small HTTP/1.1 server for Prometheus scrapes, on its own thread (never a
// worker, never the control lcore: a slow scrape or a blocked console does
// not hold up the other):
//
//   GET /metrics  -> 200, the text of render() (OpenMetrics when the Accept
//                    header asks for application/openmetrics-text)
//   GET other     -> 404;   other methods -> 405;   malformed -> 400
//
// Non-blocking sockets under poll(): every client is answered once and closed
// (Connection: close); a client that sends nothing complete within 10 s, or a
// request head over 8 KB, is dropped; at most 64 clients at once.

#include "app/config/config.hpp"
#include "app/control/metrics.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

namespace laps::app {

class metrics_server {
public:
    using render_fn = std::function<std::string(metrics_format)>;

    // Binds and listens (throws startup_error naming the address and why),
    // then serves on a thread until destroyed.
    metrics_server(const metrics_config& config, render_fn render);
    ~metrics_server();
    metrics_server(const metrics_server&) = delete;
    metrics_server& operator=(const metrics_server&) = delete;

    // The bound port (the one chosen when the config said 0).
    std::uint16_t port() const noexcept { return _port; }
    std::uint64_t scrapes() const noexcept { return _scrapes.load(std::memory_order_relaxed); }

private:
    void serve() noexcept;

    render_fn _render;
    int _listen = -1;
    int _wake[2] = {-1, -1}; // a pipe: the destructor writes, the thread wakes
    std::uint16_t _port = 0;
    std::atomic<std::uint64_t> _scrapes{0};
    std::thread _thread;
};

} // namespace laps::app
