#include "console/console.hpp"

#include "console/grammar.h"
#include "softmax/policy.hpp"

#include <cmdline_rdline.h>
#include <cmdline_socket.h>

#include <cstdio>
#include <fstream>
#include <memory>

namespace laps::console {

namespace {

console* current = nullptr;

struct cmdline_deleter {
    void operator()(::cmdline* cl) const noexcept { cmdline_free(cl); }
};

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
    current = nullptr;
}

void console::run_file(const std::string& path)
{
    {
        std::ifstream probe(path);
        if (!probe) {
            throw console_error("cannot read command file '" + path + "'");
        }
    }
    std::unique_ptr<::cmdline, cmdline_deleter> cl(cmdline_file_new(laps_console_context, _prompt.c_str(), path.c_str()));
    if (!cl) {
        throw console_error("cannot read command file '" + path + "'");
    }
    cmdline_interact(cl.get());
    std::fputs("\n", stdout);
    std::fflush(stdout);
}

void console::run_line(const std::string& line)
{
    std::unique_ptr<::cmdline, cmdline_deleter> cl(cmdline_new(laps_console_context, _prompt.c_str(), -1, 1));
    if (!cl) {
        throw console_error("cannot create a command line");
    }
    const std::string text = line + "\n";
    cmdline_in(cl.get(), text.c_str(), static_cast<int>(text.size()));
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
