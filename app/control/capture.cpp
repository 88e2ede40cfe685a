// rte_pcapng is an experimental API in DPDK 22.11.
#define ALLOW_EXPERIMENTAL_API 1

#include "app/control/capture.hpp"

#include "app/log.hpp"
#include "wire/mbuf_parse.hpp"

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_pcapng.h>
#include <rte_version.h>

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace laps::app {

namespace {

constexpr std::uint32_t pool_mbufs = 8191;
constexpr std::uint32_t ring_size = 4096;
constexpr unsigned write_burst = 64;

std::string side_name(capture_side s)
{
    return std::string(common::name_of(capture_side_names, s));
}

// DPDK 22.11's rte_pcapng_copy sets its TSC-to-time base at its first call,
// from the TSC at that moment: a timestamp taken before it (a worker's, just
// before its first copy) goes negative and throws every later timestamp
// centuries off. So the first call is made here, on the control thread, with
// a timestamp a little ahead; worker timestamps are then all later than the
// base.
void prime_clock_with(rte_mempool* pool)
{
    static bool primed = false;
    if (primed) {
        return;
    }
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) {
        return;
    }
    if (rte_pktmbuf_append(m, 64) != nullptr) {
        const std::uint64_t ahead = rte_get_tsc_cycles() + rte_get_tsc_hz() / 100;
        rte_mbuf* c = rte_pcapng_copy(0, 0, m, pool, 64, ahead, RTE_PCAPNG_DIRECTION_UNKNOWN);
        rte_pktmbuf_free(c);
        primed = c != nullptr;
    }
    rte_pktmbuf_free(m);
}

} // namespace

void capture::prime_clock()
{
    prime_clock_with(_pool.get());
}

capture::~capture()
{
    stop();
}

void capture::offer(capture_point point, std::uint16_t port, std::uint16_t queue, std::uint16_t udp_port,
                    rte_mbuf* const* pkts, std::uint16_t n) noexcept
{
    constexpr auto relaxed = std::memory_order_relaxed;
    const bool host = point == capture_point::host_rx || point == capture_point::host_tx;
    if (host ? !_host.load(relaxed) : !_fabric.load(relaxed)) {
        return;
    }
    const std::int32_t pid = _pid.load(relaxed);
    const std::uint32_t snaplen = _snaplen.load(relaxed);
    if (host && pid >= 0) {
        return; // host frames carry no pid
    }
    const auto direction = point == capture_point::host_rx || point == capture_point::fabric_rx
                               ? RTE_PCAPNG_DIRECTION_IN
                               : RTE_PCAPNG_DIRECTION_OUT;
    std::array<rte_mbuf*, 64> copies;
    std::uint16_t k = 0;
    const std::uint64_t now = rte_get_tsc_cycles();
    for (std::uint16_t i = 0; i < n; ++i) {
        if (pid >= 0) {
            const wire::parse_result r = wire::parse(pkts[i], udp_port);
            if (!r.ok() || r.packet.header.pid != static_cast<std::uint16_t>(pid)) {
                continue;
            }
        }
        _offered.fetch_add(1, std::memory_order_relaxed);
        rte_mbuf* c = rte_pcapng_copy(port, queue, pkts[i], _pool.get(), snaplen, now, direction);
        if (c == nullptr) {
            _drop_no_mbuf.fetch_add(1, std::memory_order_relaxed);
            _total_drops[1].fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        copies[k++] = c;
        if (k == copies.size()) {
            const unsigned sent = rte_ring_mp_enqueue_burst(_ring.get(), reinterpret_cast<void* const*>(copies.data()),
                                                            k, nullptr);
            if (sent < k) {
                rte_pktmbuf_free_bulk(copies.data() + sent, k - sent);
                _drop_ring_full.fetch_add(k - sent, std::memory_order_relaxed);
                _total_drops[0].fetch_add(k - sent, std::memory_order_relaxed);
            }
            k = 0;
        }
    }
    if (k > 0) { // the last packets were filtered out after some copies
        const unsigned sent =
            rte_ring_mp_enqueue_burst(_ring.get(), reinterpret_cast<void* const*>(copies.data()), k, nullptr);
        if (sent < k) {
            rte_pktmbuf_free_bulk(copies.data() + sent, k - sent);
            _drop_ring_full.fetch_add(k - sent, std::memory_order_relaxed);
            _total_drops[0].fetch_add(k - sent, std::memory_order_relaxed);
        }
    }
}

void capture::start(const capture_config& config)
{
    const std::lock_guard<std::mutex> lock(_mutex);
    if (_running.load()) {
        throw std::runtime_error("a capture to " + _config.file + " is running (capture stop first)");
    }
    join(); // a capture that ended by itself
    discard_leftovers();
    if (config.pid && config.side == capture_side::host) {
        throw std::runtime_error("pid: pids are on the fabric side (side fabric or both)");
    }
    if (!_pool) {
        const std::uint32_t room = RTE_MBUF_DEFAULT_BUF_SIZE;
        _pool = make_pktmbuf_pool("laps_capture", "capture copies", pool_mbufs, 256,
                                  static_cast<std::uint16_t>(room), static_cast<int>(rte_socket_id()));
        rte_ring* r = rte_ring_create("laps_capture", ring_size, static_cast<int>(rte_socket_id()), RING_F_SC_DEQ);
        if (r == nullptr) {
            throw std::runtime_error(std::string("cannot create the capture ring: ") + rte_strerror(rte_errno));
        }
        _ring.reset(r);
    }
    prime_clock();
    const int fd = open(config.file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        throw std::runtime_error(config.file + ": " + std::strerror(errno));
    }
    utsname u{};
    uname(&u);
    const std::string os = std::string(u.sysname) + " " + u.release;
    const std::string app = std::string("laps (") + rte_version() + ")";
    _file = rte_pcapng_fdopen(fd, os.c_str(), u.machine, app.c_str(), nullptr);
    if (_file == nullptr) {
        close(fd);
        throw std::runtime_error(config.file + ": cannot start a pcapng file: " + rte_strerror(rte_errno));
    }
    _config = config;
    _host.store(config.side != capture_side::fabric);
    _fabric.store(config.side != capture_side::host);
    _pid.store(config.pid ? static_cast<std::int32_t>(*config.pid) : -1);
    _snaplen.store(config.snaplen);
    for (auto* c : {&_offered, &_written, &_drop_ring_full, &_drop_no_mbuf, &_drop_write, &_over_limit}) {
        c->store(0);
    }
    _ended.clear();
    _stop_request.store(false);
    _started = std::chrono::steady_clock::now();
    _running.store(true);
    _writer = std::thread([this] { write_loop(); });
    _active.store(true, std::memory_order_release);
    std::string filter = std::string("side ") + side_name(config.side);
    if (config.pid) {
        filter += ", pid " + std::to_string(*config.pid);
    }
    log_line("capture: writing " + config.file + " (" + filter +
             (config.count ? ", count " + std::to_string(config.count) : std::string()) +
             (config.duration_ns ? ", " + std::to_string(static_cast<double>(config.duration_ns) / 1e9) + " s"
                                 : std::string()) +
             ")");
}

void capture::write_loop() noexcept
{
    std::array<rte_mbuf*, write_burst> pkts;
    const auto deadline = _started + std::chrono::nanoseconds(_config.duration_ns);
    std::string why = "stopped";
    const auto write = [&](unsigned n) {
        if (_config.count != 0) {
            const std::uint64_t room = _config.count - std::min(_config.count, _written.load());
            if (n > room) {
                rte_pktmbuf_free_bulk(pkts.data() + room, static_cast<unsigned>(n - room));
                _over_limit.fetch_add(n - room);
                n = static_cast<unsigned>(room);
            }
        }
        if (n == 0) {
            return;
        }
        const ssize_t rc = rte_pcapng_write_packets(_file, pkts.data(), static_cast<std::uint16_t>(n));
        // DPDK 22.11's rte_pcapng_write_packets leaves the mbufs to the caller
        // (its header says otherwise; dpdk-dumpcap frees them after the call
        // too): measured, every written copy stayed in use.
        rte_pktmbuf_free_bulk(pkts.data(), n);
        if (rc < 0) {
            _drop_write.fetch_add(n);
            _total_drops[2].fetch_add(n);
        } else {
            _written.fetch_add(n);
            _total_written.fetch_add(n);
        }
    };
    for (;;) {
        const unsigned n = rte_ring_sc_dequeue_burst(_ring.get(), reinterpret_cast<void**>(pkts.data()), write_burst,
                                                     nullptr);
        write(n);
        if (_config.count != 0 && _written.load() >= _config.count) {
            why = "count reached";
            break;
        }
        if (_config.duration_ns != 0 && std::chrono::steady_clock::now() >= deadline) {
            why = "seconds elapsed";
            break;
        }
        if (n == 0) {
            if (_stop_request.load()) {
                break;
            }
            const timespec nap{0, 1'000'000};
            nanosleep(&nap, nullptr);
        }
    }
    _active.store(false, std::memory_order_release);
    // What workers had already copied: written within the limit, else freed.
    unsigned n;
    while ((n = rte_ring_sc_dequeue_burst(_ring.get(), reinterpret_cast<void**>(pkts.data()), write_burst,
                                          nullptr)) > 0) {
        write(n);
    }
    rte_pcapng_close(_file); // closes the file descriptor
    _file = nullptr;
    _ended = why;
    log_line("capture: " + std::to_string(_written.load()) + " packets written to " + _config.file + " (" + why +
             "); dropped: ring full " + std::to_string(_drop_ring_full.load()) + ", no mbuf " +
             std::to_string(_drop_no_mbuf.load()) + ", write failed " + std::to_string(_drop_write.load()));
    _running.store(false);
}

void capture::join()
{
    if (_writer.joinable()) {
        _writer.join();
    }
}

bool capture::stop()
{
    const std::lock_guard<std::mutex> lock(_mutex);
    const bool was = _running.load();
    _stop_request.store(true);
    join();
    discard_leftovers();
    return was;
}

void capture::discard_leftovers()
{
    // Copies a worker enqueued after the writer's last look: in no file.
    if (_ring) {
        void* objs[64];
        unsigned n;
        while ((n = rte_ring_dequeue_burst(_ring.get(), objs, 64, nullptr)) > 0) {
            rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(objs), n);
            _over_limit.fetch_add(n);
        }
    }
}

void capture::show(std::ostream& out)
{
    const std::lock_guard<std::mutex> lock(_mutex);
    if (_config.file.empty()) {
        out << "capture: none (capture start <file> ...)\n";
        return;
    }
    const bool running = _running.load();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - _started).count();
    out << "capture: " << (running ? "running" : "ended (" + (_ended.empty() ? std::string("stopped") : _ended) + ")")
        << " file " << _config.file << " side " << side_name(_config.side) << " pid "
        << (_config.pid ? std::to_string(*_config.pid) : std::string("any")) << " count "
        << (_config.count ? std::to_string(_config.count) : std::string("-")) << " seconds "
        << (_config.duration_ns ? std::to_string(static_cast<double>(_config.duration_ns) / 1e9) : std::string("-"))
        << "\n";
    out << "  matched " << _offered.load() << " written " << _written.load() << " drop_ring_full "
        << _drop_ring_full.load() << " drop_no_mbuf " << _drop_no_mbuf.load() << " drop_write " << _drop_write.load()
        << " after_limit " << _over_limit.load() << " copies_in_use " << (_pool ? rte_mempool_in_use_count(_pool.get()) : 0);
    if (running) {
        out << " elapsed " << static_cast<std::uint64_t>(seconds) << " s";
    }
    out << "\n";
}

std::optional<std::pair<std::string, unsigned>> capture::mbufs_in_use() const
{
    if (!_pool) {
        return std::nullopt;
    }
    return std::make_pair(std::string(_pool->name), rte_mempool_in_use_count(_pool.get()));
}

void capture::write_metrics(metrics_writer& w) const
{
    w.counter("laps_capture_packets", "Packets written to live-capture files (console `capture start`).");
    w.sample({}, _total_written.load());
    w.counter("laps_capture_drops", "Packets a live capture could not keep, by reason.");
    const char* reasons[] = {"ring_full", "no_mbuf", "write_failed"};
    for (std::size_t i = 0; i < 3; ++i) {
        w.sample({{"reason", reasons[i]}}, _total_drops[i].load());
    }
}

} // namespace laps::app
