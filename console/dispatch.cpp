// The handlers of every console instruction: parse the values rte_cmdline
// leaves as strings, call the backend, print its output or the error.
#include "console/backend.hpp"
#include "console/console.hpp"
#include "console/grammar.h"
#include "console/parse_args.hpp"

#include "common/names.hpp"

#include <arpa/inet.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace laps::console {
console* active_console() noexcept;
}

namespace {

using namespace laps;

tables::address to_address(const cmdline_ipaddr_t& ip)
{
    if (ip.family == AF_INET) {
        return tables::address::ipv4_wire(reinterpret_cast<const std::uint8_t*>(&ip.addr.ipv4));
    }
    return tables::address::ipv6_wire(reinterpret_cast<const std::uint8_t*>(&ip.addr.ipv6));
}

std::string_view section_of(std::string_view first_word)
{
    if (first_word == "show" || first_word == "clear") {
        return "show";
    }
    if (first_word == "set") {
        return "set";
    }
    if (first_word == "path") {
        return "path";
    }
    if (first_word == "pst" || first_word == "pit" || first_word == "load") {
        return "tables";
    }
    return "control"; // wait, start, stop, quit, capture
}

constexpr std::string_view sections[] = {"show", "set", "path", "tables", "control"};

void help(std::ostream& out, std::string_view only)
{
    for (const auto section : sections) {
        if (!only.empty() && section != only) {
            continue;
        }
        out << section << ":\n";
        for (cmdline_parse_ctx_t* inst = laps_console_commands; *inst != nullptr; ++inst) {
            const std::string_view text((*inst)->help_str);
            if (section_of(text.substr(0, text.find_first_of(" :"))) == section) {
                out << "  " << text << "\n";
            }
        }
        if (section == "set") {
            out << "  policies: " << common::joined_names(softmax::policy_registry, " ") << "\n";
        }
    }
}

// `help <word>`: a section, or every form of the commands starting with it.
void help_topic(std::ostream& out, const std::string& word)
{
    for (const auto section : sections) {
        if (section == word) {
            help(out, section);
            return;
        }
    }
    bool found = false;
    for (cmdline_parse_ctx_t* inst = laps_console_commands; *inst != nullptr; ++inst) {
        const std::string_view text((*inst)->help_str);
        if (text.substr(0, text.find_first_of(" :")) == word) {
            out << "  " << text << "\n";
            found = true;
        }
    }
    if (found) {
        return;
    }
    std::vector<std::string> topics(std::begin(sections), std::end(sections));
    for (const auto& w : console::command_words(0, "")) {
        topics.push_back(w);
    }
    const std::string near = console::suggest(word, topics);
    throw console::console_error("help: no section or command '" + word +
                                 "'; sections: show, set, path, tables, control" +
                                 (near.empty() ? std::string() : "; did you mean 'help " + near + "'?"));
}

console::capture_request capture_request_of(const laps_cmd_capture& r, bool options)
{
    console::capture_request c;
    c.file = r.file;
    if (!options) {
        return c;
    }
    std::istringstream in(r.rest);
    std::string key;
    while (in >> key) {
        std::string value;
        if (!(in >> value)) {
            throw console::console_error("capture: '" + key + "' needs a value");
        }
        if (key == "side") {
            if (value != "host" && value != "fabric" && value != "both") {
                throw console::console_error("capture: side '" + value + "': expected host, fabric or both");
            }
            c.side = value;
        } else if (key == "pid") {
            c.pid = static_cast<std::uint16_t>(console::parse_number(value, "capture pid", 0, 65535));
            if (std::to_string(*c.pid) != value) {
                throw console::console_error("capture: pid '" + value + "' is not a whole number");
            }
        } else if (key == "count") {
            c.count = static_cast<std::uint64_t>(console::parse_number(value, "capture count", 1, 1e12));
        } else if (key == "seconds") {
            c.seconds = console::parse_number(value, "capture seconds", 0.001, 1e6);
        } else if (key == "snaplen") {
            c.snaplen = static_cast<std::uint32_t>(console::parse_number(value, "capture snaplen", 64, 65535));
        } else {
            throw console::console_error("capture: unknown option '" + key +
                                         "' (known: side, pid, count, seconds, snaplen)");
        }
    }
    return c;
}

void run(laps_console_command id, void* parsed, console::backend& b, std::ostream& out)
{
    switch (id) {
    case LAPS_CMD_HELP:
        help(out, "");
        return;
    case LAPS_CMD_HELP_SECTION:
        help_topic(out, static_cast<laps_cmd_value*>(parsed)->value);
        return;
    case LAPS_CMD_SHOW_PORT_STATS_ALL:
        b.show_port_stats(out, std::nullopt);
        return;
    case LAPS_CMD_SHOW_PORT_STATS_ONE:
        b.show_port_stats(out, static_cast<laps_cmd_port*>(parsed)->port);
        return;
    case LAPS_CMD_CLEAR_PORT_STATS_ALL:
        b.clear_port_stats();
        out << "port stats cleared\n";
        return;
    case LAPS_CMD_SHOW_PST:
        b.show_pst(out, std::nullopt);
        return;
    case LAPS_CMD_SHOW_PST_DST:
        b.show_pst(out, to_address(static_cast<laps_cmd_address*>(parsed)->address));
        return;
    case LAPS_CMD_SHOW_PIT:
        b.show_pit(out, std::nullopt, std::nullopt);
        return;
    case LAPS_CMD_SHOW_PIT_PID:
        b.show_pit(out, static_cast<laps_cmd_pid*>(parsed)->pid, std::nullopt);
        return;
    case LAPS_CMD_SHOW_PIT_DST:
        b.show_pit(out, std::nullopt, to_address(static_cast<laps_cmd_address*>(parsed)->address));
        return;
    case LAPS_CMD_SHOW_FLOWS:
        b.show_flows(out, 20);
        return;
    case LAPS_CMD_SHOW_FLOWS_N:
        b.show_flows(out, static_cast<laps_cmd_count*>(parsed)->n);
        return;
    case LAPS_CMD_SHOW_PATHS_STATS:
        b.show_paths_stats(out);
        return;
    case LAPS_CMD_SHOW_ENGINE_STATS:
        b.show_engine_stats(out);
        return;
    case LAPS_CMD_SHOW_LCORES:
        b.show_lcores(out);
        return;
    case LAPS_CMD_SHOW_CONFIG:
        b.show_config(out);
        return;
    case LAPS_CMD_SET_BETA: {
        const double v = console::parse_number(static_cast<laps_cmd_value*>(parsed)->value, "beta", 0.0, 1e6);
        b.set_beta_fixed(v);
        out << "beta: fixed " << v << " per us\n";
        return;
    }
    case LAPS_CMD_SET_BETA_NORMALIZED: {
        const double v =
            console::parse_number(static_cast<laps_cmd_keyword_value*>(parsed)->value, "alpha", 0.0, 1e6);
        b.set_beta_normalized(v);
        out << "beta: normalized, alpha " << v << "\n";
        return;
    }
    case LAPS_CMD_SET_POLICY: {
        const std::string_view name = static_cast<laps_cmd_value*>(parsed)->value;
        const auto p = softmax::find_policy(name);
        if (!p) {
            throw console::console_error("unknown policy '" + std::string(name) + "'");
        }
        b.set_policy(*p);
        out << "policy: " << name << "\n";
        return;
    }
    case LAPS_CMD_SET_AIMD_N: {
        const std::uint32_t n = static_cast<laps_cmd_keyword_count*>(parsed)->n;
        if (n > 64) {
            throw console::console_error("aimd n: " + std::to_string(n) + " is out of range [0, 64]");
        }
        b.set_aimd_stages(n);
        out << "aimd increase stages: " << n << "\n";
        return;
    }
    case LAPS_CMD_SET_CC: {
        const std::string_view name = static_cast<laps_cmd_value*>(parsed)->value;
        const auto cc = common::find_named(congestion::cc_variant_names, name);
        if (!cc) {
            throw console::console_error("cc: '" + std::string(name) + "' is not one of: " +
                                         common::joined_names(congestion::cc_variant_names));
        }
        b.set_cc(*cc);
        out << "cc: " << name << "\n";
        return;
    }
    case LAPS_CMD_PATH_STATE: {
        auto* r = static_cast<laps_cmd_path_state*>(parsed);
        const bool up = std::strcmp(r->state, "up") == 0;
        b.set_path_up(r->pid, up);
        out << "path " << r->pid << ": " << (up ? "up" : "down") << "\n";
        return;
    }
    case LAPS_CMD_PST_ADD:
    case LAPS_CMD_PST_ADD_FABRIC: {
        auto* r = static_cast<laps_cmd_pst_add*>(parsed);
        const auto destination = to_address(r->destination);
        std::uint32_t fabric = 0;
        if (id == LAPS_CMD_PST_ADD_FABRIC) {
            fabric = to_address(r->fabric).ipv4_host_order();
        }
        b.pst_add(destination, console::parse_pid_list(r->pids), fabric);
        out << "pst: added " << destination.to_string() << "\n";
        return;
    }
    case LAPS_CMD_PST_DEL: {
        const auto destination = to_address(static_cast<laps_cmd_address*>(parsed)->address);
        b.pst_del(destination);
        out << "pst: deleted " << destination.to_string() << "\n";
        return;
    }
    case LAPS_CMD_PIT_ADD: {
        auto* r = static_cast<laps_cmd_pit_add*>(parsed);
        b.pit_add(console::parse_pit_row(r->pid, r->rest));
        out << "pit: added pid " << r->pid << "\n";
        return;
    }
    case LAPS_CMD_PIT_DEL: {
        const auto pid = static_cast<laps_cmd_pid*>(parsed)->pid;
        b.pit_del(pid);
        out << "pit: deleted pid " << pid << "\n";
        return;
    }
    case LAPS_CMD_LOAD:
        b.load(static_cast<laps_cmd_value*>(parsed)->value, out);
        return;
    case LAPS_CMD_WAIT_PACKETS: {
        const std::uint64_t n = static_cast<laps_cmd_wait*>(parsed)->n;
        b.wait_packets(n);
        out << "waited for " << n << " packets\n";
        return;
    }
    case LAPS_CMD_START:
        b.start();
        out << "forwarding started\n";
        return;
    case LAPS_CMD_STOP:
        b.stop();
        out << "forwarding stopped\n";
        return;
    case LAPS_CMD_QUIT:
        b.quit();
        return;
    case LAPS_CMD_CAPTURE_START:
    case LAPS_CMD_CAPTURE_START_OPTIONS:
        b.capture_start(capture_request_of(*static_cast<laps_cmd_capture*>(parsed),
                                           id == LAPS_CMD_CAPTURE_START_OPTIONS),
                        out);
        return;
    case LAPS_CMD_CAPTURE_STOP:
        b.capture_stop(out);
        return;
    case LAPS_CMD_SHOW_CAPTURE:
        b.show_capture(out);
        return;
    case LAPS_CMD_UNMATCHED:
        out << console::explain(static_cast<laps_cmd_unmatched*>(parsed)->line) << "\n";
        return;
    }
}

} // namespace

extern "C" void laps_console_dispatch(void* parsed, struct cmdline* cl, void* data)
{
    auto* c = laps::console::active_console();
    const auto id = static_cast<laps_console_command>(reinterpret_cast<std::uintptr_t>(data));
    std::ostringstream out;
    try {
        if (c == nullptr) {
            throw laps::console::console_error("no console");
        }
        run(id, parsed, c->target(), out);
    } catch (const std::exception& e) {
        out << "error: " << e.what() << "\n";
    }
    // To stdout, not cmdline_printf: a parser fed from a script has no output
    // of its own, and interactively its output is stdout anyway.
    const std::string text = out.str();
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    if (id == LAPS_CMD_QUIT) {
        if (c != nullptr) {
            c->note_quit();
        }
        cmdline_quit(cl);
    }
}
