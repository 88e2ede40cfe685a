#pragma once
// Errors of the topology library. Messages are meant for the user who wrote
// the topology: they name the element (node, link, path, parameter) and, when
// it came from a file, where it is ("file.yaml:12: ...").

#include <stdexcept>
#include <string>

namespace laps::topology {

// Where an element was described; line 0 means "not from a file" (builders).
struct source_location {
    std::string file;
    int line = 0;

    // "file:line: " or "" when unknown, ready to prefix a message.
    std::string prefix() const
    {
        if (line <= 0) {
            return file.empty() ? std::string() : file + ": ";
        }
        return file + ":" + std::to_string(line) + ": ";
    }
};

// A topology description is wrong: bad YAML, unknown key, dangling link, ...
class topology_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    topology_error(const source_location& where, const std::string& what)
        : std::runtime_error(where.prefix() + what)
    {
    }
};

// A path cannot be used: unreachable destination, too many anchors, too many
// pids for the tables.
class path_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace laps::topology
