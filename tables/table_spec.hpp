#pragma once
// Tables as plain data: what a config file or a topology export describes,
// before it is loaded into the lookup structures (pit, path_sets, pst).
//
// Producers: config/ (explicit `paths:` rows in YAML), topology/ (computed).
// Consumer: tables::path_table::build and tables::pst.

#include "tables/address.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace laps::tables {

// A path id: 16 bits on the wire (paper §III-B), local to one source host.
using path_id = std::uint16_t;

// Source-routing anchors per path: the FPGA prototype's limit (paper §IV-C).
inline constexpr std::size_t max_anchors = 4;

// Candidate paths per destination: 16 here, 8 in the FPGA prototype.
inline constexpr std::size_t max_paths_per_destination = 16;

// One PIT row: the static description of a path.
struct pit_row {
    path_id pid = 0;
    bool valid = true;
    // baseVal: uncongested one-way delay plus the queueing margin (§III-F).
    std::int64_t base_ns = 0;
    // What an idle path measures (baseVal minus the margin). Used to remove a
    // sender/receiver clock offset from measurements; equals base_ns when unknown.
    std::int64_t uncongested_ns = 0;
    std::uint8_t hop_count = 0;
    std::uint8_t anchor_count = 0;
    std::array<std::uint32_t, max_anchors> anchors{};
};

// One PST row: a destination and its candidate paths, in preference order.
struct pst_row {
    address destination;
    std::vector<path_id> pids;
    // The destination host's fabric IPv4 (host order), the outer header's
    // destination. 0: the destination itself, which must then be IPv4.
    std::uint32_t fabric_ipv4 = 0;
};

struct table_spec {
    std::vector<pst_row> pst;
    std::vector<pit_row> pit;
};

} // namespace laps::tables
