#include "app/ports/flow_rules.hpp"

#include "app/ports/steering.hpp"

#include <rte_byteorder.h>
#include <rte_errno.h>

#include <utility>

namespace laps::app {

fabric_rule::fabric_rule(std::uint16_t udp_port, std::uint16_t tag_value, std::uint16_t mask,
                         std::uint16_t queue_id) noexcept
    : tag(tag_value), queue_index(queue_id)
{
    attr.ingress = 1;
    udp_spec.hdr.dst_port = rte_cpu_to_be_16(udp_port);
    udp_spec.hdr.src_port = rte_cpu_to_be_16(tag_value);
    udp_mask.hdr.dst_port = rte_cpu_to_be_16(0xffff);
    udp_mask.hdr.src_port = rte_cpu_to_be_16(mask);
    queue.index = queue_id;

    // eth and ipv4 without spec: any Ethernet, any IPv4.
    pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
    pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
    pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
    pattern[2].spec = &udp_spec;
    pattern[2].mask = &udp_mask;
    pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
    actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
    actions[0].conf = &queue;
    actions[1].type = RTE_FLOW_ACTION_TYPE_END;
}

std::vector<std::unique_ptr<fabric_rule>> build_fabric_rules(std::uint16_t udp_port, std::uint8_t tag_bits,
                                                             std::uint16_t workers)
{
    std::vector<std::unique_ptr<fabric_rule>> rules;
    const std::uint16_t mask = tag_mask(tag_bits);
    for (std::uint32_t t = 0; t <= mask; ++t) {
        const auto tag = static_cast<std::uint16_t>(t);
        rules.push_back(std::make_unique<fabric_rule>(udp_port, tag, mask, worker_of_tag(tag, workers)));
    }
    return rules;
}

flow_rules::~flow_rules()
{
    clear();
}

flow_rules::flow_rules(flow_rules&& other) noexcept : _port(other._port), _flows(std::exchange(other._flows, {}))
{
}

flow_rules& flow_rules::operator=(flow_rules&& other) noexcept
{
    if (this != &other) {
        clear();
        _port = other._port;
        _flows = std::exchange(other._flows, {});
    }
    return *this;
}

void flow_rules::clear() noexcept
{
    for (auto it = _flows.rbegin(); it != _flows.rend(); ++it) {
        rte_flow_error error{};
        rte_flow_destroy(_port, *it, &error);
    }
    _flows.clear();
}

namespace {

std::string describe(const char* step, int rc, const rte_flow_error& error)
{
    std::string why = std::string(step) + ": " + rte_strerror(-rc);
    if (error.message != nullptr) {
        why += " (";
        why += error.message;
        why += ")";
    }
    return why;
}

} // namespace

bool flow_rules::install(std::uint16_t port_id, const std::vector<std::unique_ptr<fabric_rule>>& rules,
                         std::string& why)
{
    clear();
    _port = port_id;
    for (const auto& r : rules) {
        rte_flow_error error{};
        const int rc = rte_flow_validate(port_id, &r->attr, r->pattern.data(), r->actions.data(), &error);
        if (rc != 0) {
            why = describe("rte_flow_validate", rc, error);
            return false;
        }
    }
    for (const auto& r : rules) {
        rte_flow_error error{};
        rte_flow* f = rte_flow_create(port_id, &r->attr, r->pattern.data(), r->actions.data(), &error);
        if (f == nullptr) {
            why = describe("rte_flow_create", -rte_errno, error);
            clear();
            return false;
        }
        _flows.push_back(f);
    }
    return true;
}

} // namespace laps::app
