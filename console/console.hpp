#pragma once
// The testpmd-style console on rte_cmdline, prompt "laps> ".
//
//   console c(backend);
//   c.run_file("script.txt");   // --cmdline-file: every command, echoed, in order
//   c.open_stdin();             // interactive: then poll() once per control-loop turn
//
// One console per process: the rte_cmdline handlers find their backend
// through it.

#include "console/backend.hpp"

#include <string>
#include <vector>

struct cmdline;

namespace laps::console {

// Why no command takes `line`, as the one line printed for it: "error:
// unknown command 'shwo'; did you mean 'show'? ...", "error: bad arguments;
// usage: ...". The same at the prompt and in scripts.
std::string explain(const std::string& line);
// The distinct words at `position` of the commands' usages (position 1:
// of those whose first word is `after`).
std::vector<std::string> command_words(std::size_t position, const std::string& after);
// 1 when no command takes `line` (the catch-all instruction's test).
int unmatched(const char* line);
// The candidate `word` is a likely typo of, or "".
std::string suggest(const std::string& word, const std::vector<std::string>& candidates);

class console {
public:
    explicit console(backend& backend, std::string prompt = "laps> ");
    ~console();
    console(const console&) = delete;
    console& operator=(const console&) = delete;

    // Runs the commands of a file; throws console_error when it cannot be read.
    void run_file(const std::string& path);
    // Runs one command line, echoed after the prompt; output to stdout.
    // Blank lines and lines starting with '#' are skipped.
    void run_line(const std::string& line);
    // `quit` was given: run_file stops there.
    void note_quit() noexcept { _quit_seen = true; }

    // Interactive use on stdin. poll() never blocks; it returns false once
    // the user quit (quit, or end of input).
    void open_stdin();
    bool poll();
    bool interactive() const noexcept { return _stdin != nullptr; }

    backend& target() noexcept { return _backend; }

private:
    void close_stdin() noexcept;

    backend& _backend;
    std::string _prompt;
    ::cmdline* _stdin = nullptr;
    ::cmdline* _parser = nullptr; // for run_line
    bool _quit_seen = false;
};

} // namespace laps::console
