// cmdline_parse_check is an experimental API in DPDK 22.11.
#define ALLOW_EXPERIMENTAL_API 1

#include "console/console.hpp"

#include "common/names.hpp"

#include "console/grammar.h"
#include "softmax/policy.hpp"

#include <cmdline_rdline.h>
#include <cmdline_socket.h>

#include <cmdline_parse.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <memory>
#include <algorithm>
#include <vector>

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
    const std::string choices = common::joined_names(softmax::policy_registry, "#");
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

struct cmdline_deleter {
    void operator()(::cmdline* c) const noexcept { cmdline_free(c); }
};

// A parser of every instruction but the catch-all: does one of them take a
// line, and how does it fail? (A negative CMDLINE_PARSE_* code, or >= 0.)
int check(const std::string& line)
{
    static const std::unique_ptr<::cmdline, cmdline_deleter> checker(cmdline_new(laps_console_commands, "", -1, -1));
    if (!checker) {
        return CMDLINE_PARSE_SUCCESS;
    }
    std::string text = line.substr(0, line.find_first_of("\r\n"));
    text += '\n';
    return cmdline_parse_check(checker.get(), text.c_str());
}

std::vector<std::string> words_of(const std::string& text)
{
    std::istringstream in(text);
    std::vector<std::string> out;
    std::string w;
    while (in >> w) {
        out.push_back(w);
    }
    return out;
}

// The usage part of every instruction's help ("show pit <pid>").
std::vector<std::string> usages()
{
    std::vector<std::string> out;
    for (cmdline_parse_ctx_t* inst = laps_console_commands; *inst != nullptr; ++inst) {
        const std::string help((*inst)->help_str);
        out.push_back(help.substr(0, help.find(':')));
    }
    return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = up;
        }
    }
    return row[b.size()];
}

// The closest of `candidates` to `word`, when close enough to be a typo.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates)
{
    std::string best;
    std::size_t best_d = std::string::npos;
    for (const auto& c : candidates) {
        if (c.empty() || c.front() == '<') {
            continue;
        }
        const std::size_t d = edit_distance(word, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    const std::size_t limit = word.size() <= 3 ? 1 : 2;
    return best_d <= limit && best_d < word.size() ? best : std::string();
}

// The usage lines of the commands that start like `line` (its first word,
// and its second when that narrows it down).
std::string usage_for(const std::vector<std::string>& words)
{
    const std::string first = words.empty() ? "" : words[0];
    const std::string second = words.size() > 1 ? words[1] : "";
    std::string by_first;
    std::string by_two;
    for (const auto& usage : usages()) {
        const auto hw = words_of(usage);
        if (hw.empty() || hw[0] != first) {
            continue;
        }
        by_first += (by_first.empty() ? "" : " | ") + usage;
        if (hw.size() > 1 && hw[1] == second) {
            by_two += (by_two.empty() ? "" : " | ") + usage;
        }
    }
    const std::string& best = by_two.empty() ? by_first : by_two;
    return best.empty() ? std::string("help lists the commands") : "usage: " + best;
}

} // namespace

// For the catch-all token (commands.c).
int unmatched(const char* line)
{
    const int rc = check(line);
    return rc < 0 && rc != CMDLINE_PARSE_AMBIGUOUS ? 1 : 0;
}

std::vector<std::string> command_words(std::size_t position, const std::string& after)
{
    std::vector<std::string> out;
    for (const auto& usage : usages()) {
        const auto w = words_of(usage);
        if (w.size() > position && (position == 0 || w[0] == after) &&
            std::find(out.begin(), out.end(), w[position]) == out.end()) {
            out.push_back(w[position]);
        }
    }
    return out;
}

std::string suggest(const std::string& word, const std::vector<std::string>& candidates)
{
    return nearest(word, candidates);
}

std::string explain(const std::string& line)
{
    std::string text = line.substr(0, line.find_first_of("\r\n"));
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
        text.pop_back();
    }
    const auto first = text.find_first_not_of(" \t");
    text = first == std::string::npos ? std::string() : text.substr(first);
    const auto words = words_of(text);
    const int rc = check(text);
    if (rc == CMDLINE_PARSE_AMBIGUOUS) {
        return "error: ambiguous command (help lists the commands)";
    }
    if (rc == CMDLINE_PARSE_BAD_ARGS) {
        std::string hint;
        if (words.size() > 1) {
            const auto second = command_words(1, words[0]);
            if (std::find(second.begin(), second.end(), words[1]) == second.end()) {
                if (const auto n = nearest(words[1], second); !n.empty()) {
                    hint = "; did you mean '" + words[0] + " " + n + "'?";
                }
            }
        }
        return "error: bad arguments; " + usage_for(words) + hint;
    }
    std::string hint = " (help lists the commands)";
    if (!words.empty()) {
        if (const auto n = nearest(words[0], command_words(0, "")); !n.empty()) {
            hint = "; did you mean '" + n + "'? (help lists the commands)";
        }
    }
    return "error: unknown command '" + text + "'" + hint;
}

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
    default:
        // The catch-all instruction answers unmatched lines; what is left
        // (an ambiguous line) is explained the same way.
        std::printf("%s\n", explain(text).c_str());
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

// Called from rte_cmdline's C code: nothing may propagate through it.
extern "C" int laps_console_unmatched(const char* line)
{
    try {
        return laps::console::unmatched(line);
    } catch (...) {
        return 0; // rte_cmdline's own message then
    }
}
