#include "app/control/console_backend.hpp"

#include "app/control/inspect.hpp"
#include "wire/replay_window.hpp"

#include <rte_ethdev.h>
#include <rte_lcore.h>

#include <chrono>
#include <ctime>
#include <iomanip>
#include <mutex>
#include <sstream>

namespace laps::app {

namespace {

// A list for the console's tables: "-" when empty.
std::string listed(const auto& numbers)
{
    return numbers.empty() ? std::string("-") : comma_joined(numbers);
}

std::string beta_text(const softmax::beta_params& b)
{
    std::ostringstream s;
    if (b.mode == softmax::beta_mode::fixed) {
        s << "fixed " << b.fixed_per_ns * 1000.0 << " per us";
    } else {
        s << "normalized alpha " << b.alpha;
    }
    return s.str();
}

std::string gbps(double bps)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << bps / 1e9;
    return s.str();
}

} // namespace

console_backend::console_backend(const app_config& config, std::vector<std::unique_ptr<instance>>& instances,
                                 std::atomic<bool>& paused, std::atomic<bool>& quit,
                                 std::vector<unsigned> other_lcores, capture& live_capture)
    : _config(config), _instances(instances), _paused(paused), _quit(quit), _other_lcores(std::move(other_lcores)),
      _capture(live_capture)
{
}

void console_backend::on_every_engine(const std::function<void(pipeline::engine&)>& work)
{
    for (auto& inst : _instances) {
        for (std::size_t w = 0; w < inst->worker_count(); ++w) {
            try {
                inst->worker_at(w).control(work);
            } catch (const std::exception& e) {
                if (_instances.size() > 1) {
                    throw console::console_error("instance " + inst->name() + ": " + e.what());
                }
                throw console::console_error(e.what());
            }
        }
    }
}

void console_backend::on_every_instance(const std::function<void(instance&)>& edit, const std::string& only)
{
    for (auto& inst : _instances) {
        if (!only.empty() && inst->name() != only) {
            continue;
        }
        try {
            const std::lock_guard<std::mutex> lock(inst->tables().control_mutex());
            edit(*inst);
        } catch (const console::console_error&) {
            throw;
        } catch (const std::exception& e) {
            if (_instances.size() > 1) {
                throw console::console_error("instance " + inst->name() + ": " + e.what());
            }
            throw console::console_error(e.what());
        }
    }
}

void console_backend::show_port_stats(std::ostream& out, std::optional<std::uint16_t> port)
{
    bool found = false;
    for (auto& inst : _instances) {
        for (const auto* p : {&inst->host_port(), &inst->fabric_port()}) {
            if (port && p->id() != *port) {
                continue;
            }
            found = true;
            rte_eth_stats st{};
            if (rte_eth_stats_get(p->id(), &st) != 0) {
                throw console::console_error("port " + std::to_string(p->id()) + ": no statistics");
            }
            out << "port " << p->id() << " (" << inst->name() << " " << (p == &inst->host_port() ? "host" : "fabric")
                << "): rx_packets " << st.ipackets << " tx_packets " << st.opackets << " rx_bytes " << st.ibytes
                << " tx_bytes " << st.obytes << " rx_missed " << st.imissed << " rx_errors " << st.ierrors
                << " tx_errors " << st.oerrors << " rx_no_mbuf " << st.rx_nombuf << "\n";
        }
    }
    if (!found) {
        throw console::console_error("no port " + std::to_string(port.value_or(0)) + " (see show port stats all)");
    }
}

void console_backend::clear_port_stats()
{
    for (auto& inst : _instances) {
        for (const auto* p : {&inst->host_port(), &inst->fabric_port()}) {
            rte_eth_stats_reset(p->id());
        }
    }
}

void console_backend::show_pst(std::ostream& out, std::optional<tables::address> destination)
{
    std::ostringstream text; // printed only when there is no error
    bool found = false;
    for (auto& inst : _instances) {
        const auto rows = inspect_pst(*inst);
        text << "instance " << inst->name() << ": destinations " << rows.size() << "\n";
        for (const auto& r : rows) {
            if (destination && r.destination != *destination) {
                continue;
            }
            found = true;
            text << "  dst " << r.destination.to_string() << " pids " << listed(r.pids) << " fabric "
                 << format_ipv4(r.fabric_ipv4) << "\n";
        }
    }
    if (destination && !found) {
        throw console::console_error("destination " + destination->to_string() + " is not in the PST");
    }
    out << text.str();
}

void console_backend::show_pit(std::ostream& out, std::optional<tables::path_id> pid,
                               std::optional<tables::address> destination)
{
    std::ostringstream text;
    bool found = false;
    for (auto& inst : _instances) {
        const auto rows = inspect_pit(*inst);
        text << "instance " << inst->name() << ": paths " << rows.size() << "\n";
        for (const auto& r : rows) {
            if ((pid && r.pid != *pid) || (destination && r.destination != destination)) {
                continue;
            }
            found = true;
            text << "  pid " << r.pid << " dst " << (r.destination ? r.destination->to_string() : "-") << " valid "
                 << (r.valid ? "yes" : "no") << " base_ns " << r.base_ns << " uncongested_ns " << r.uncongested_ns
                 << " real_ns " << r.real_ns << " hops " << unsigned{r.hops} << " anchors " << listed(r.anchors)
                 << "\n";
        }
    }
    if (pid && !found) {
        throw console::console_error("pid " + std::to_string(*pid) + " has no PIT row");
    }
    if (destination && !found) {
        throw console::console_error("destination " + destination->to_string() + " has no paths");
    }
    out << text.str();
}

void console_backend::show_flows(std::ostream& out, std::uint32_t max)
{
    for (auto& inst : _instances) {
        const auto engine = inspect_engine(*inst);
        const auto rows = inspect_flows(*inst, max);
        out << "instance " << inst->name() << ": flows " << engine.flows << " receiving " << engine.receive_flows
            << " shown " << rows.size() << "\n";
        for (const auto& f : rows) {
            char id[16];
            std::snprintf(id, sizeof id, "0x%08x", f.flow_id);
            out << "  worker " << f.worker << " flow " << id << " " << describe(f.key) << " rate " << gbps(f.rate_bps)
                << " Gb/s expected " << gbps(f.expected_bps) << " Gb/s in_flight " << f.in_flight << " queued "
                << f.queued << " lost " << f.lost_pending << "\n";
        }
    }
}

void console_backend::show_paths_stats(std::ostream& out)
{
    for (auto& inst : _instances) {
        const auto rows = inspect_paths(*inst);
        out << "instance " << inst->name() << ": paths " << rows.size() << "\n";
        for (const auto& r : rows) {
            out << "  pid " << r.pid << " packets " << r.packets << " bytes " << r.bytes << " share " << std::fixed
                << std::setprecision(2) << 100.0 * r.share << "%" << std::defaultfloat << " real_ns " << r.real_ns
                << " base_ns " << r.base_ns << " probes " << r.probes << " losses " << r.losses << " valid "
                << (r.valid ? "yes" : "no") << "\n";
        }
    }
}

void console_backend::show_engine_stats(std::ostream& out)
{
    for (auto& inst : _instances) {
        const auto e = inspect_engine(*inst);
        out << "instance " << inst->name() << ":\n";
        for (const auto& c : pipeline::engine_counter_list) {
            out << "  " << c.name << ": " << e.counters.*c.field << "\n";
        }
        for (std::size_t i = 1; i < e.parse_errors.size(); ++i) {
            if (e.parse_errors[i] != 0) {
                out << "  " << wire::to_string(static_cast<wire::parse_error>(i)) << ": " << e.parse_errors[i] << "\n";
            }
        }
    }
}

void console_backend::show_lcores(std::ostream& out)
{
    out << "lcore " << rte_get_main_lcore() << ": control (console, telemetry, timers)\n";
    for (auto& inst : _instances) {
        for (std::size_t w = 0; w < inst->worker_count(); ++w) {
            const auto& io = inst->worker_at(w).io();
            out << "lcore " << inst->lcores()[w] << ": worker " << w << " of " << inst->name() << " (host "
                << (io.host_rxq >= 0 ? "rxq " + std::to_string(io.host_rxq) : std::string("ring"))
                << (io.host_dispatcher ? " dispatcher" : "") << ", fabric "
                << (io.fabric_rxq >= 0 ? "rxq " + std::to_string(io.fabric_rxq) : std::string("ring"))
                << (io.fabric_dispatcher ? " dispatcher" : "") << ", txq " << io.txq << ")\n";
        }
    }
    for (const auto l : _other_lcores) {
        out << "lcore " << l << ": link\n";
    }
}

void console_backend::show_config(std::ostream& out)
{
    out << "config: " << _config.source << "\n";
    out << "forwarding: " << (_paused.load() ? "stopped" : "started") << "\n";
    // Whether a key is set and where from: never the key (docs/security.md).
    if (_config.auth) {
        out << "auth: key set (" << _config.auth->from << "), SipHash-2-4 tags of 64 bits, replay window "
            << wire::replay_window::bits << " per sender, " << _config.auth->peers << " senders per worker\n";
    } else {
        out << "auth: off (no key: packets are neither signed nor checked)\n";
    }
    for (auto& inst : _instances) {
        const auto& c = inst->config();
        const auto sel = inspect_selection(*inst);
        out << "instance " << inst->name() << ":\n";
        out << "  host port: " << (c.host.link ? std::string("link") : c.host.devargs) << "\n";
        out << "  fabric port: " << (c.fabric.link ? std::string("link") : c.fabric.devargs) << "\n";
        out << "  workers: " << inst->worker_count() << "\n";
        out << "  selection: policy " << softmax::to_string(sel.selection.policy) << ", beta "
            << beta_text(sel.selection.beta) << ", probing " << (sel.selection.probing ? "on" : "off") << "\n";
        const auto& a = c.engine.algo.congestion.aimd;
        const bool coupled = sel.cc == congestion::cc_variant::fair && a.fair.coupled_paths;
        out << "  congestion: cc " << congestion::to_string(sel.cc) << (coupled ? " (coupled paths)" : "") << ", increase_stages " << sel.increase_stages << ", rate_floor_gbps " << a.floor_bps / 1e9
            << ", rate_cap_gbps " << a.cap_bps / 1e9 << "\n";
        out << "  retransmit: window_packets " << c.engine.algo.retransmit.window_packets << ", min_timeout_us "
            << c.engine.algo.retransmit.min_timeout_ns / 1000 << "\n";
        out << "  tables: destinations " << sel.destinations << ", paths " << sel.paths << ", flow_capacity "
            << c.engine.algo.tables.flow_capacity << ", clocks "
            << (c.engine.algo.tables.estimate_clock_offset ? "unsynchronized" : "synchronized") << "\n";
        out << "  engine: unknown_destination "
            << common::name_of(unknown_destination_policy_names, c.engine.unknown_destination) << ", oversize "
            << common::name_of(oversize_policy_names, c.engine.oversize)
            << ", in_order " << (c.engine.in_order ? "true" : "false") << ", acks "
            << common::name_of(pipeline::ack_mode_names, c.engine.acks) << "\n";
    }
}

void console_backend::wait_packets(std::uint64_t n)
{
    const auto taken = [this] {
        std::uint64_t sum = 0;
        for (const auto& inst : _instances) {
            sum += inst->host_taken();
        }
        return sum;
    };
    const std::uint64_t target = taken() + n;
    // Workers publish host_taken on every busy iteration; poll it. The limit
    // is a deadline, not a count of pauses: a pause lasts longer than asked
    // on a busy machine (twice as long here), and so would the wait.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        if (taken() >= target || _quit.load()) {
            return;
        }
        const timespec pause{0, 100'000};
        nanosleep(&pause, nullptr);
    }
    throw console::console_error("wait: " + std::to_string(n) + " packets did not arrive within 60 s (" +
                                 std::to_string(target - taken()) + " missing)");
}

void console_backend::start()
{
    _paused.store(false);
}

void console_backend::stop()
{
    _paused.store(true);
}

void console_backend::quit()
{
    _quit.store(true);
}

void console_backend::capture_start(const console::capture_request& request, std::ostream& out)
{
    capture_config c;
    c.file = request.file;
    c.side = common::find_named(capture_side_names, request.side).value_or(capture_side::both);
    c.pid = request.pid;
    c.count = request.count;
    c.duration_ns = static_cast<common::time_ns>(request.seconds * 1e9);
    c.snaplen = request.snaplen;
    try {
        _capture.start(c);
    } catch (const std::exception& e) {
        throw console::console_error(std::string("capture: ") + e.what());
    }
    (void)out; // the log line says it, with the filter
}

void console_backend::capture_stop(std::ostream& out)
{
    if (!_capture.stop()) {
        throw console::console_error("capture: none is running (show capture)");
    }
    _capture.show(out);
}

void console_backend::show_capture(std::ostream& out)
{
    _capture.show(out);
}
} // namespace laps::app
