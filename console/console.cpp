#include "console/console.hpp"

#include "console/grammar.h"
#include "softmax/policy.hpp"

#include <cmdline_rdline.h>
#include <cmdline_socket.h>

#include <cmdline_parse.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <memory>

namespace laps::console {

namespace {

console* current = nullptr;

} // namespace

console* active_console() noexcept
{
    return current;
}

console::console(backend& backend, std::string prompt) : _backend(backend), _prompt(std::move(prompt))
{
    if (current != nullptr) {
        throw console_error("only one console per process");
    }
    std::string choices;
    for (const auto& p : softmax::policy_registry) {
        choices += choices.empty() ? "" : "#";
        choices += p.name;
    }
    laps_console_set_policy_choices(choices.c_str());
    current = this;
}

console::~console()
{
    close_stdin();
    if (_parser != nullptr) {
        cmdline_free(_parser);
    }
    current = nullptr;
}

namespace {

// The usage lines of the commands that start like `line` (its first word,
// and its second when that narrows it down), for a helpful error.
std::string usage_for(const std::string& line)
{
    std::istringstream words(line);
    std::string first;
    std::string second;
    words >> first >> second;
    std::string by_first;
    std::string by_two;
    for (cmdline_parse_ctx_t* inst = laps_console_context; *inst != nullptr; ++inst) {
        const std::string help((*inst)->help_str);
        const std::string usage = help.substr(0, help.find(':'));
        std::istringstream hw(usage);
        std::string h1;
        std::string h2;
        hw >> h1 >> h2;
        if (h1 != first) {
            continue;
        }
        by_first += (by_first.empty() ? "" : " | ") + usage;
        if (h2 == second) {
            by_two += (by_two.empty() ? "" : " | ") + usage;
        }
    }
    const std::string& best = by_two.empty() ? by_first : by_two;
    return best.empty() ? std::string("help lists the commands") : "usage: " + best;
}

} // namespace

void console::run_file(const std::string& path)
{
    std::ifstream in(path);
    if (!in) {
        throw console_error("cannot read command file '" + path + "'");
    }
    std::string line;
    while (!_quit_seen && std::getline(in, line)) {
        run_line(line);
    }
}

void console::run_line(const std::string& line)
{
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') {
        return; // blank lines and comments are not echoed
    }
    // A transcript: the prompt and the command, then its output, so that a
    // script's output reads like an interactive session and diffs cleanly.
    std::printf("%s%s\n", _prompt.c_str(), line.c_str() + first);
    std::fflush(stdout);
    if (!_parser) {
        // A parser with no input or output of its own: we feed it lines.
        _parser = cmdline_new(laps_console_context, _prompt.c_str(), -1, -1);
        if (_parser == nullptr) {
            throw console_error("cannot create a command parser");
        }
    }
    std::string text = line.substr(first);
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ' || text.back() == '\t')) {
        text.pop_back();
    }
    text += '\n';
    // cmdline_parse returns the length it parsed on success, a negative
    // CMDLINE_PARSE_* code otherwise.
    const int rc = cmdline_parse(_parser, text.c_str());
    switch (rc >= 0 ? CMDLINE_PARSE_SUCCESS : rc) {
    case CMDLINE_PARSE_SUCCESS:
        break;
    case CMDLINE_PARSE_AMBIGUOUS:
        std::printf("error: ambiguous command (help lists the commands)\n");
        break;
    case CMDLINE_PARSE_BAD_ARGS:
        std::printf("error: bad arguments; %s\n", usage_for(text).c_str());
        break;
    default:
        std::printf("error: unknown command '%s' (help lists the commands)\n",
                    text.substr(0, text.size() - 1).c_str());
        break;
    }
    std::fflush(stdout);
}

void console::open_stdin()
{
    if (_stdin == nullptr) {
        _stdin = cmdline_stdin_new(laps_console_context, _prompt.c_str());
        if (_stdin == nullptr) {
            throw console_error("cannot open the console on stdin");
        }
    }
}

bool console::poll()
{
    if (_stdin == nullptr) {
        return false;
    }
    if (cmdline_poll(_stdin) == RDLINE_EXITED) {
        close_stdin();
        return false;
    }
    return true;
}

void console::close_stdin() noexcept
{
    if (_stdin != nullptr) {
        cmdline_stdin_exit(_stdin); // restores the terminal and frees
        _stdin = nullptr;
    }
}

} // namespace laps::console
