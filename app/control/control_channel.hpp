#pragma once
// Console and telemetry work on a worker's engine, done by the worker itself
// between bursts: the engine's state has one writer, and workers never stop
// or take a lock for the control plane.
//
//   control lcore / telemetry thread          worker lcore
//   run(work) --- request* ---> rte_ring ---> serve(): work(engine), done = true
//             <------ waits for done ---------
//
// The ring is single-producer (callers are serialised by a mutex) and
// single-consumer (the worker). A worker that is not running (not launched
// yet, or returned) cannot serve: run() then does the work itself, on the
// caller's thread, which is then the engine's only user.

#include "pipeline/engine.hpp"

#include <rte_ring.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>

namespace laps::app {

class control_channel {
public:
    using work = std::function<void(pipeline::engine&)>;

    explicit control_channel(const std::string& name);
    ~control_channel();
    control_channel(const control_channel&) = delete;
    control_channel& operator=(const control_channel&) = delete;

    // Runs `w` on `engine` and returns when it is done; rethrows what it
    // threw as std::runtime_error. `running` is the worker's running flag.
    void run(const work& w, pipeline::engine& engine, const std::atomic<bool>& running);

    // Worker side, once per loop iteration: at most one request.
    void serve(pipeline::engine& engine) noexcept
    {
        void* item = nullptr;
        if (rte_ring_sc_dequeue(_ring, &item) == 0) {
            execute(*static_cast<request*>(item), engine);
        }
    }

private:
    struct request {
        const work* w = nullptr;
        std::string error;
        std::atomic<bool> done{false};
    };
    static void execute(request& r, pipeline::engine& engine) noexcept;

    rte_ring* _ring = nullptr;
    std::mutex _mutex;
};

} // namespace laps::app
