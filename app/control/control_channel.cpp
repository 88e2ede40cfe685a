#include "app/control/control_channel.hpp"

#include "app/errors.hpp"

#include <rte_errno.h>

#include <ctime>
#include <stdexcept>

namespace laps::app {

control_channel::control_channel(const std::string& name)
{
    _ring = rte_ring_create(name.c_str(), 4, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (_ring == nullptr) {
        throw startup_error("cannot create control ring '" + name + "': " + rte_strerror(rte_errno));
    }
}

control_channel::~control_channel()
{
    rte_ring_free(_ring);
}

void control_channel::execute(request& r, pipeline::engine& engine) noexcept
{
    try {
        (*r.w)(engine);
    } catch (const std::exception& e) {
        r.error = e.what();
    } catch (...) {
        r.error = "unknown error";
    }
    r.done.store(true, std::memory_order_release);
}

void control_channel::run(const work& w, pipeline::engine& engine, const std::atomic<bool>& running)
{
    const std::lock_guard<std::mutex> lock(_mutex);
    request r;
    r.w = &w;
    if (!running.load(std::memory_order_acquire) || rte_ring_sp_enqueue(_ring, &r) != 0) {
        execute(r, engine);
    } else {
        while (!r.done.load(std::memory_order_acquire)) {
            if (!running.load(std::memory_order_acquire)) {
                // The worker returned: it will not serve again. Take the
                // request back if it is still queued, and do it here.
                void* item = nullptr;
                if (rte_ring_sc_dequeue(_ring, &item) == 0) {
                    execute(*static_cast<request*>(item), engine);
                }
                break;
            }
            // The control lcore may share a core with this worker: let it run.
            const timespec pause{0, 20'000};
            nanosleep(&pause, nullptr);
        }
    }
    if (!r.error.empty()) {
        throw std::runtime_error(r.error);
    }
}

} // namespace laps::app
