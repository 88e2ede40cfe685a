#pragma once
// A whole file read into memory, but never more than a limit: a config or a
// topology the size of /dev/zero is refused after limit + 1 bytes, not after
// it has taken the machine's memory. Callers word the error.

#include <array>
#include <cstddef>
#include <fstream>
#include <string>

namespace laps::common {

enum class read_status { ok, cannot_open, too_large };

inline read_status read_bounded(const std::string& path, std::size_t limit, std::string& out)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        return read_status::cannot_open;
    }
    out.clear();
    std::array<char, 64 * 1024> chunk;
    while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
        out.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
        if (out.size() > limit) {
            return read_status::too_large;
        }
    }
    return read_status::ok;
}

} // namespace laps::common
