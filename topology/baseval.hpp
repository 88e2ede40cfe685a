#pragma once
// baseVal (paper §III-C, §III-F): the one-way delay of an idle path plus a
// queueing margin, and the idle delay alone (uncongested_ns).
//
//   uncongested = sum over links of (serialization of one packet at the link
//                 rate, rounded up to the ns as common::serialization_ns does,
//                 + propagation delay)
//   margin      = per_switch: margin_packets x the serialization at the egress
//                 link of every node the packet is forwarded by (switches, and
//                 hosts that relay, like GPUs over NVLink): the paper, 5 packets;
//                 per_link: margin_packets x the serialization on every link:
//                 the authors' simulator, 1 packet.
//   base        = uncongested + margin (rounded to the ns)

#include "common/names.hpp"
#include "topology/model.hpp"

#include <array>
#include <optional>
#include <span>
#include <string_view>

namespace laps::topology {

enum class margin_mode { per_switch, per_link };
inline constexpr std::array margin_mode_names{
    common::named<margin_mode>{"per_switch", margin_mode::per_switch},
    common::named<margin_mode>{"per_link", margin_mode::per_link},
};

struct delay_options {
    std::uint32_t packet_bytes = 1024;
    margin_mode margin = margin_mode::per_switch;
    double margin_packets = 5;
};

// "per_switch:5", "per_link:1", "per_switch" (5) or "per_link" (1).
// Throws topology_error on bad text.
void parse_margin(std::string_view text, delay_options& options);

struct path_delay {
    std::int64_t base_ns = 0;
    std::int64_t uncongested_ns = 0;

    bool operator==(const path_delay&) const = default;
};

class delay_model {
public:
    delay_model(const fabric& f, const delay_options& options);

    const delay_options& options() const noexcept { return _options; }
    std::int64_t serialization_ns(link_id l) const noexcept { return _serialization[l]; }

    // The reference computation over a whole path (node ids).
    path_delay of(std::span<const node_id> path) const;

    // The same, split so that the sums of one core path serve every pair of
    // hosts behind its ends: combine(sums(core), access links) == of(path).
    struct sums {
        std::int64_t link_ns = 0;   // serialization + propagation over the links
        std::int64_t serial_ns = 0; // serialization over the links
        std::int64_t first_serial_ns = 0;
        bool has_links = false;
    };
    sums sum(std::span<const node_id> path) const;
    path_delay combine(const sums& core, std::optional<link_id> from_access, std::optional<link_id> to_access) const;

private:
    path_delay finish(std::int64_t link_ns, std::int64_t serial_ns, std::int64_t first_serial_ns) const;

    const fabric& _fabric;
    delay_options _options;
    std::vector<std::int64_t> _serialization; // per link
};

} // namespace laps::topology
