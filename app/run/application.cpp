#include "app/run/application.hpp"

#include "app/errors.hpp"
#include "app/log.hpp"
#include "app/run/signals.hpp"
#include "app/ports/steering.hpp"

#include <rte_lcore.h>

#include <csignal>
#include <cstring>
#include <ctime>
#include <set>

namespace laps::app {

namespace {

std::string enabled_lcores()
{
    std::string s;
    unsigned l;
    RTE_LCORE_FOREACH(l)
    {
        if (!s.empty()) {
            s += ',';
        }
        s += std::to_string(l);
    }
    return s;
}

void nap(long ns)
{
    const timespec t{0, ns};
    nanosleep(&t, nullptr);
}

} // namespace

application::application(app_config config, options opts) : _config(std::move(config)), _options(std::move(opts))
{
    assign_lcores();
    log_line("clock: TSC at " + std::to_string(_clock.hz() / 1000000) + " MHz (resolution " +
             std::to_string(_clock.resolution_ns()) + " ns)");
    if (_config.link) {
        // Every side sends and receives: a receiver that masks more tag bits
        // than its sender puts (hash bits above the sender's tag) would
        // spread one flow over several workers.
        const auto& a = _config.instances[0];
        const unsigned bits_a = a.steering.tag_bits.value_or(default_tag_bits);
        for (std::size_t i = 1; i < _config.instances.size(); ++i) {
            const auto& b = _config.instances[i];
            const unsigned bits_b = b.steering.tag_bits.value_or(default_tag_bits);
            if (bits_a != bits_b) {
                throw startup_error("steering.tag_bits: instance " + a.name + " uses " + std::to_string(bits_a) +
                                    " bits and " + b.name + " " + std::to_string(bits_b) +
                                    ": the steering tag width is fabric-wide, set the same steering.tag_bits on all "
                                    "linked instances");
            }
        }
    }
    const std::uint32_t link_ring = _config.link ? _config.link->ring_size : 1024;
    for (std::size_t i = 0; i < _config.instances.size(); ++i) {
        _instances.push_back(std::make_unique<instance>(_config.instances[i], _worker_lcores[i], _config.idle,
                                                        worker_timing{_config.run.drain_ns, _config.run.tx_batch_ns}, link_ring, _clock, _stop,
                                                        _paused));
    }
    for (auto& in : _instances) {
        _baselines.push_back(std::make_unique<baseline_watch>(*in));
    }
    // Where timestamps are taken (docs/app.md "Timestamps").
    log_line("timestamps: clock read right after each fabric RX burst and right before each fabric TX burst "
             "(DATA/PROBE restamped; TX batch <= " + std::to_string(_config.run.tx_batch_ns / 1000.0).substr(0, 5) +
             " us)");
    for (const auto& in : _instances) {
        const port& fabric = in->fabric_port();
        if ((fabric.info().rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) != 0) {
            log_line("timestamps: " + in->name() + "'s fabric port " + fabric.name() + " (" + fabric.driver() +
                     ") offers RX timestamps; laps does not use them yet (software stamps on both ends, docs/app.md)");
        }
    }
    if (_config.link) {
        std::vector<link_side> sides;
        std::string names;
        for (const auto& in : _instances) {
            sides.push_back(in->link());
            names += (names.empty() ? "" : (&in == &_instances.back() ? " and " : ", ")) + in->name();
        }
        _link = std::make_unique<link>(*_config.link, std::move(sides), _clock, _stop, _config.idle);
        std::string delays;
        for (const auto& p : _config.link->paths) {
            delays += " pid " + std::to_string(p.pid) + " " + std::to_string(p.delay_ns / 1000) + " us,";
        }
        std::string rate;
        if (_config.link->rate_bps > 0) {
            rate = "; each instance receives at " + std::to_string(_config.link->rate_bps / 1e9).substr(0, 6) + " Gb/s";
        }
        log_line("link: lcore " + std::to_string(_link_lcore) + " joins " + names + ";" + delays + " others " +
                 std::to_string(_config.link->default_delay_ns / 1000) + " us" + rate);
    }
    std::vector<unsigned> others;
    if (_link) {
        others.push_back(_link_lcore);
    }
    for (auto& inst : _instances) {
        for (std::size_t w = 0; w < inst->worker_count(); ++w) {
            inst->worker_at(w).set_capture(&_capture);
        }
    }
    _backend = std::make_unique<console_backend>(_config, _instances, _paused, _quit, std::move(others), _capture);
    _console = std::make_unique<console::console>(*_backend);
    _telemetry = std::make_unique<telemetry>(_config, _instances);
    if (_config.metrics) {
        _metrics = std::make_unique<metrics_server>(*_config.metrics, [this](metrics_format format) {
            metrics_writer w(format);
            write_instance_metrics(w, _instances);
            _capture.write_metrics(w);
            return w.finish();
        });
    }
}

application::~application()
{
    _stop.store(true);
    for (auto& i : _instances) {
        i->wait();
    }
    if (_link) {
        rte_eal_wait_lcore(_link_lcore);
    }
}

void application::assign_lcores()
{
    const unsigned main = rte_get_main_lcore();
    const unsigned control = _config.control_lcore.value_or(main);
    if (control != main) {
        throw startup_error("lcores.control: " + std::to_string(control) + " is not the EAL main lcore (" +
                            std::to_string(main) + "): start laps with --main-lcore " + std::to_string(control) +
                            " or change the config");
    }
    std::set<unsigned> used{main};
    const auto need = [&](unsigned l, const std::string& what) {
        if (!rte_lcore_is_enabled(l)) {
            throw startup_error("lcores: the config needs lcore " + std::to_string(l) + " (" + what +
                                ") but EAL has only lcores " + enabled_lcores() +
                                ": start laps with more (-l 0-N, or --lcores=0@0,1@1,2@1 to share cores)");
        }
        if (!used.insert(l).second) {
            throw startup_error("lcores: lcore " + std::to_string(l) + " (" + what +
                                ") is already the control lcore or another worker's");
        }
    };
    _worker_lcores.resize(_config.instances.size());
    for (std::size_t i = 0; i < _config.instances.size(); ++i) {
        for (const auto l : _config.instances[i].workers) {
            need(l, "worker of instance " + _config.instances[i].name);
        }
        _worker_lcores[i] = _config.instances[i].workers;
    }
    const auto first_free = [&]() -> std::optional<unsigned> {
        unsigned l;
        RTE_LCORE_FOREACH_WORKER(l)
        {
            if (!used.contains(l)) {
                return l;
            }
        }
        return std::nullopt;
    };
    if (_config.link) {
        if (_config.link->lcore) {
            need(*_config.link->lcore, "the link");
            _link_lcore = *_config.link->lcore;
        } else if (const auto l = first_free()) {
            _link_lcore = *l;
            used.insert(*l);
        } else {
            throw startup_error("lcores: no lcore left for the link: EAL has lcores " + enabled_lcores() +
                                "; start laps with more (-l, or --lcores=0@0,1@1,2@1,3@0 to share cores)");
        }
    }
    for (std::size_t i = 0; i < _config.instances.size(); ++i) {
        if (!_worker_lcores[i].empty()) {
            continue;
        }
        if (_config.instances.size() > 1) {
            throw startup_error("instances." + _config.instances[i].name +
                                ".lcores.workers: required when there are several instances");
        }
        while (const auto l = first_free()) {
            _worker_lcores[i].push_back(*l);
            used.insert(*l);
        }
        if (_worker_lcores[i].empty()) {
            throw startup_error("lcores: no lcore left for workers: EAL has only lcore(s) " + enabled_lcores() +
                                " (the main one is the control lcore): start laps with -l 0,1 or more");
        }
    }
}

std::string application::stop_reason(common::time_ns start, common::time_ns now)
{
    if (_quit.load()) {
        return "console: quit";
    }
    if (const int sig = signal_guard::received()) {
        return std::string("signal ") + signal_name(sig);
    }
    const auto& run = _config.run;
    std::uint64_t taken = 0;
    std::uint64_t fabric = 0;
    for (const auto& i : _instances) {
        taken += i->host_taken();
        fabric += i->fabric_received();
    }
    if (run.max_packets != 0 && taken >= run.max_packets) {
        return "run.max_packets reached (" + std::to_string(taken) + " host frames taken)";
    }
    if (run.max_fabric_packets != 0 && fabric >= run.max_fabric_packets) {
        return "run.max_fabric_packets reached (" + std::to_string(fabric) + " packets from the fabric)";
    }
    if (run.duration_ns != 0 && now - start >= run.duration_ns) {
        return "run.duration_ms elapsed";
    }
    if (run.idle_ns != 0) {
        // Polls that left host frames on the port because the engine was
        // full: laps itself holding the input back, not the input ending.
        constexpr std::size_t backpressure_index =
            common::counter_index(worker_counter_list, "backpressure_polls");
        static_assert(backpressure_index < worker_counter_list.size());
        std::uint64_t backpressure = 0;
        for (const auto& i : _instances) {
            backpressure += i->published_worker(backpressure_index);
        }
        if (taken + fabric != _last_received) {
            _last_received = taken + fabric;
            _last_activity = now;
            _backpressure_at_activity = backpressure;
        } else if (now - _last_activity >= run.idle_ns) {
            std::string reason = "run.idle_ms: nothing received for " + std::to_string(run.idle_ns / common::ns_per_ms) + " ms";
            if (backpressure != _backpressure_at_activity) {
                // Not an input that ended: ACKs stopped coming and the
                // windows stayed full. Said, so frames left unread on the
                // host port are not taken for all there was.
                reason += " while laps held the host port back (windows full, no ACK came): host frames may be left "
                          "unread; run.duration_ms or a signal stops such a run instead";
            }
            return reason;
        }
    }
    return {};
}

void application::on_stats_timer(rte_timer*, void* self)
{
    auto* app = static_cast<application*>(self);
    const common::time_ns now = app->_clock.now();
    for (std::size_t i = 0; i < app->_instances.size(); ++i) {
        live_sample s = sample(*app->_instances[i], now);
        print_periodic(*app->_instances[i], app->_last_samples[i], s);
        app->_last_samples[i] = std::move(s);
    }
}

unsigned application::run()
{
    if (const int sig = signal_guard::received()) {
        log_line(std::string("signal ") + signal_name(sig) + " came during start-up: the run ends as it begins");
    }
    // A capture from the config starts before any lcore runs, so it holds
    // every packet from the first (docs/app.md "Live capture").
    if (_config.capture) {
        _capture.start(*_config.capture); // throws naming the file
    }
    if (_link) {
        if (rte_eal_remote_launch(link::launch, _link.get(), _link_lcore) != 0) {
            throw startup_error("lcore " + std::to_string(_link_lcore) + " is busy: cannot launch the link");
        }
    }
    for (auto& i : _instances) {
        i->launch();
    }
    const common::time_ns start = _clock.now();
    _last_activity = start;
    for (const auto& i : _instances) {
        _last_samples.push_back(sample(*i, start));
    }
    if (_config.stats.interval_ns > 0) {
        rte_timer_init(&_stats_timer);
        rte_timer_reset(&_stats_timer, _clock.cycles_for(_config.stats.interval_ns), PERIODICAL, rte_lcore_id(),
                        on_stats_timer, this);
    }
    log_line(std::string("running") +
             (_options.interactive ? " (console: type help; Ctrl-C clears the line, quit or Ctrl-D stops laps)" : "") +
             ": stop with quit, SIGINT/SIGTERM or the run: conditions");

    if (_options.cmdline_file) {
        log_line("console: running the commands of " + *_options.cmdline_file);
        std::fflush(stdout);
        _console->run_file(*_options.cmdline_file);
        if (!_options.interactive) {
            _quit.store(true); // --no-interactive: the script was the session
        }
    }
    if (_options.interactive && !_quit.load()) {
        _console->open_stdin();
    }

    std::string reason;
    while ((reason = stop_reason(start, _clock.now())).empty()) {
        rte_timer_manage();
        if (_console->interactive() && !_console->poll()) {
            _quit.store(true); // quit, or end of input
        }
        for (auto& poll : _pollers) {
            poll();
        }
        if (const common::time_ns now = _clock.now(); now - _baselines_checked >= baseline_check_ns) {
            _baselines_checked = now;
            for (auto& b : _baselines) {
                b->check();
            }
        }
        // The control lcore may share a core with a worker: do not spin.
        nap(200'000);
    }
    const common::time_ns stopped = _clock.now();
    // Scrapes read the running workers: the server goes before they stop.
    _metrics.reset();
    _stop.store(true);
    if (_config.stats.interval_ns > 0) {
        rte_timer_stop_sync(&_stats_timer);
    }
    for (auto& i : _instances) {
        i->wait();
    }
    if (_link) {
        rte_eal_wait_lcore(_link_lcore);
    }
    _capture.stop(); // the workers are gone: the file has all they tapped
    log_line("stopped: " + reason);
    const double seconds = static_cast<double>(stopped - start) / 1e9;
    for (std::size_t i = 0; i < _instances.size(); ++i) {
        print_final(*_instances[i], seconds);
        const std::string p = _instances[i]->name() + ".paths.";
        std::printf("%sbase_below_measured: %llu\n%sbase_calibrated: %llu\n", p.c_str(),
                    static_cast<unsigned long long>(_baselines[i]->below_measured()), p.c_str(),
                    static_cast<unsigned long long>(_baselines[i]->calibrated()));
    }
    if (_link) {
        print_link(*_link);
    }
    // Console and telemetry read the engines: gone before the engines are.
    _telemetry.reset();
    _console.reset();
    _backend.reset();
    return close_and_check();
}

unsigned application::close_and_check()
{
    for (auto& i : _instances) {
        i->close();
    }
    if (_link) {
        _link->clear();
    }
    unsigned leaked = 0;
    std::string report;
    const auto add = [&](const std::string& pool, unsigned n) {
        std::printf("mempool.%s.in_use: %u\n", pool.c_str(), n);
        leaked += n;
        if (n != 0) {
            report += " " + pool + " " + std::to_string(n);
        }
    };
    for (const auto& i : _instances) {
        for (const auto& [name, n] : i->mbufs_in_use()) {
            add(name, n);
        }
    }
    if (_link) {
        add(_link->pool_name(), _link->mbufs_in_use());
    }
    if (const auto c = _capture.mbufs_in_use()) {
        add(c->first, c->second);
    }
    if (leaked == 0) {
        log_line("mbufs: all back in their pools");
    } else {
        log_line("mbufs: " + std::to_string(leaked) + " not back in their pools:" + report);
    }
    return leaked;
}

} // namespace laps::app
