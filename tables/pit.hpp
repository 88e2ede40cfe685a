#pragma once
// PIT, the Path Information Table (paper §III-C, Fig. 4): pid -> path state.
//
// Dense and indexed by pid, because pids are small per-host integers (16 bits
// on the wire) and every data packet and ACK touches k entries: an array index
// beats any hash. One PIT per engine shard; the shard's lcore is its only
// writer, so entries are plain fields.

#include "common/time.hpp"
#include "tables/table_spec.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace laps::tables {

using common::time_ns;

inline constexpr std::uint32_t no_set = std::numeric_limits<std::uint32_t>::max();

struct path_entry {
    // Written by the control plane (config, console), read by the data plane.
    bool present = false; // a row was configured for this pid
    bool valid = false;   // usable for new packets (a failed path is invalid)
    std::uint8_t hop_count = 0;
    std::uint8_t anchor_count = 0;
    std::array<std::uint32_t, max_anchors> anchors{};
    time_ns base_ns = 0;        // baseVal
    time_ns uncongested_ns = 0; // baseVal without the queueing margin
    std::uint32_t set = no_set; // the path set (destination) this pid serves
    std::uint8_t slot = 0;      // position of this pid in its set

    // Written by the data plane.
    time_ns measured_at = 0; // `time`: when realVal was last measured or probed
    time_ns real_ns = 0;  // `realVal`: latest one-way latency, clock offset removed
};

class pit {
public:
    explicit pit(std::size_t capacity) : _entries(capacity) {}

    std::size_t capacity() const noexcept { return _entries.size(); }
    bool contains(path_id pid) const noexcept { return pid < _entries.size() && _entries[pid].present; }

    path_entry& operator[](path_id pid) noexcept { return _entries[pid]; }
    const path_entry& operator[](path_id pid) const noexcept { return _entries[pid]; }

private:
    std::vector<path_entry> _entries;
};

} // namespace laps::tables
