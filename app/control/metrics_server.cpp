#include "app/control/metrics_server.hpp"

#include "app/errors.hpp"
#include "app/log.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace laps::app {

namespace {

constexpr std::size_t max_clients = 64;
constexpr std::size_t max_request = 8192;
constexpr auto client_timeout = std::chrono::seconds(10);

struct client {
    int fd = -1;
    std::string in;
    std::string out;
    std::size_t sent = 0;
    bool answered = false;
    std::chrono::steady_clock::time_point since;
};

std::string response(int status, const char* reason, const std::string& type, const std::string& body,
                     const char* extra = "")
{
    return "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " + type +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra + "Connection: close\r\n\r\n" +
           body;
}

std::string lower(std::string s)
{
    for (auto& c : s) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return s;
}

} // namespace

metrics_server::metrics_server(const metrics_config& config, render_fn render) : _render(std::move(render))
{
    const bool v6 = config.host.find(':') != std::string::npos;
    const std::string where = "metrics.listen " + format_listen(config);
    _listen = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (_listen < 0) {
        throw startup_error(where + ": socket: " + std::strerror(errno));
    }
    const int one = 1;
    setsockopt(_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_storage addr{};
    socklen_t len = 0;
    if (v6) {
        auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(config.port);
        inet_pton(AF_INET6, config.host.c_str(), &a->sin6_addr);
        len = sizeof *a;
    } else {
        auto* a = reinterpret_cast<sockaddr_in*>(&addr);
        a->sin_family = AF_INET;
        a->sin_port = htons(config.port);
        inet_pton(AF_INET, config.host.c_str(), &a->sin_addr);
        len = sizeof *a;
    }
    if (bind(_listen, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(_listen, 16) != 0) {
        const std::string why = std::strerror(errno);
        close(_listen);
        throw startup_error(where + ": cannot listen: " + why +
                            (errno == EADDRINUSE ? " (another process has the port: pick another, or 0 for any)" : ""));
    }
    getsockname(_listen, reinterpret_cast<sockaddr*>(&addr), &len);
    _port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                     : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
    if (pipe2(_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
        close(_listen);
        throw startup_error(where + ": pipe: " + std::strerror(errno));
    }
    metrics_config bound = config;
    bound.port = _port;
    log_line("metrics: serving http://" + format_listen(bound) + "/metrics (Prometheus text; OpenMetrics on Accept)");
    _thread = std::thread([this] { serve(); });
}

metrics_server::~metrics_server()
{
    const char c = 'q';
    (void)!write(_wake[1], &c, 1);
    if (_thread.joinable()) {
        _thread.join();
    }
    close(_wake[0]);
    close(_wake[1]);
    close(_listen);
}

void metrics_server::serve() noexcept
{
    std::vector<client> clients;
    std::vector<pollfd> fds;
    for (;;) {
        fds.clear();
        fds.push_back({_wake[0], POLLIN, 0});
        fds.push_back({_listen, POLLIN, 0});
        for (const auto& c : clients) {
            fds.push_back({c.fd, static_cast<short>(c.answered ? POLLOUT : POLLIN), 0});
        }
        if (poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) {
            log_line(std::string("metrics: poll: ") + std::strerror(errno) + "; no more scrapes");
            break;
        }
        if (fds[0].revents != 0) {
            break; // the destructor: stop
        }
        const auto now = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < clients.size(); ++i) {
            auto& c = clients[i];
            const short ev = fds[i + 2].revents;
            bool done = false;
            if (!c.answered && (ev & (POLLIN | POLLHUP | POLLERR)) != 0) {
                char buf[2048];
                const ssize_t n = recv(c.fd, buf, sizeof buf, 0);
                if (n <= 0) {
                    done = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
                } else {
                    c.in.append(buf, static_cast<std::size_t>(n));
                }
                const auto head_end = c.in.find("\r\n\r\n");
                if (!done && head_end == std::string::npos && c.in.size() > max_request) {
                    c.out = response(431, "Request Header Fields Too Large", "text/plain", "request head over 8 KB\n");
                    c.answered = true;
                } else if (!done && head_end != std::string::npos) {
                    const std::string line = c.in.substr(0, c.in.find("\r\n"));
                    const auto sp1 = line.find(' ');
                    const auto sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
                    if (sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0) {
                        c.out = response(400, "Bad Request", "text/plain", "malformed request line\n");
                    } else {
                        const std::string method = line.substr(0, sp1);
                        std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
                        target = target.substr(0, target.find('?'));
                        if (method != "GET") {
                            c.out = response(405, "Method Not Allowed", "text/plain", "only GET /metrics\n",
                                             "Allow: GET\r\n");
                        } else if (target != "/metrics") {
                            c.out = response(404, "Not Found", "text/plain", "laps serves /metrics only\n");
                        } else {
                            const bool om = lower(c.in.substr(0, head_end)).find("application/openmetrics-text") !=
                                            std::string::npos;
                            const auto format = om ? metrics_format::openmetrics : metrics_format::prometheus;
                            try {
                                c.out = response(200, "OK", content_type(format), _render(format));
                                _scrapes.fetch_add(1, std::memory_order_relaxed);
                            } catch (const std::exception& e) {
                                c.out = response(500, "Internal Server Error", "text/plain",
                                                 std::string(e.what()) + "\n");
                            }
                        }
                    }
                    c.answered = true;
                }
            } else if (c.answered && (ev & (POLLOUT | POLLHUP | POLLERR)) != 0) {
                const ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
                if (n > 0) {
                    c.sent += static_cast<std::size_t>(n);
                    done = c.sent == c.out.size();
                } else {
                    done = errno != EAGAIN && errno != EWOULDBLOCK;
                }
            }
            if (done || now - c.since > client_timeout) {
                close(c.fd);
                c.fd = -1;
            }
        }
        std::erase_if(clients, [](const client& c) { return c.fd < 0; });
        if ((fds[1].revents & POLLIN) != 0) {
            for (;;) {
                const int fd = accept4(_listen, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) {
                    break;
                }
                if (clients.size() >= max_clients) {
                    close(fd);
                    continue;
                }
                clients.push_back({fd, {}, {}, 0, false, now});
            }
        }
    }
    for (const auto& c : clients) {
        close(c.fd);
    }
}

} // namespace laps::app
