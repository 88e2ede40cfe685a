#pragma once
// rte_flow rules that steer LAPS packets on the fabric port to the worker
// that owns them:
//
//   ingress pattern eth / ipv4 / udp dst is <laps port>
//                   src spec <tag> src mask <tag mask> / end
//           actions queue index <tag % workers> / end
//
// one rule per tag value. Rules are built (build_fabric_rules, testable
// without a port), then all validated, then created; if any step fails, none
// stays and the app steers in software (steering.hpp). Other packets go where
// the PMD sends them by default (queue 0), to the first worker.

#include <rte_flow.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace laps::app {

// One rule's pattern and actions. The items point into this object, so it is
// neither copied nor moved.
struct fabric_rule {
    fabric_rule(std::uint16_t udp_port, std::uint16_t tag, std::uint16_t mask, std::uint16_t queue) noexcept;
    fabric_rule(const fabric_rule&) = delete;
    fabric_rule& operator=(const fabric_rule&) = delete;

    std::uint16_t tag;
    std::uint16_t queue_index;
    rte_flow_attr attr{};
    rte_flow_item_udp udp_spec{};
    rte_flow_item_udp udp_mask{};
    rte_flow_action_queue queue{};
    std::array<rte_flow_item, 4> pattern{};
    std::array<rte_flow_action, 2> actions{};
};

// The rules for `workers` workers using `tag_bits` bits of the source port.
std::vector<std::unique_ptr<fabric_rule>> build_fabric_rules(std::uint16_t udp_port, std::uint8_t tag_bits,
                                                             std::uint16_t workers);

// Created rules of one port; destroyed before the port is closed.
class flow_rules {
public:
    flow_rules() = default;
    ~flow_rules();
    flow_rules(const flow_rules&) = delete;
    flow_rules& operator=(const flow_rules&) = delete;
    flow_rules(flow_rules&& other) noexcept;
    flow_rules& operator=(flow_rules&& other) noexcept;

    // Validates every rule, then creates them. On failure returns false with
    // `why` set ("rte_flow_validate: Function not implemented") and leaves no
    // rule on the port.
    bool install(std::uint16_t port_id, const std::vector<std::unique_ptr<fabric_rule>>& rules, std::string& why);
    void clear() noexcept;
    std::size_t size() const noexcept { return _flows.size(); }

private:
    std::uint16_t _port = 0;
    std::vector<rte_flow*> _flows;
};

} // namespace laps::app
