// rte_flow rule construction for fabric steering, without a port or EAL:
// the pattern and action arrays that rte_flow_validate/create would get.
#include "app/ports/flow_rules.hpp"
#include "app/ports/steering.hpp"

#include <gtest/gtest.h>

#include <rte_byteorder.h>

#include <set>

namespace laps::app {
namespace {

TEST(flow_rules, one_rule_per_tag_to_the_owning_queue)
{
    const auto rules = build_fabric_rules(19521, 2, 3);
    ASSERT_EQ(rules.size(), 4u);
    for (std::size_t i = 0; i < rules.size(); ++i) {
        const auto& r = *rules[i];
        EXPECT_EQ(r.tag, i);
        EXPECT_EQ(r.queue_index, i % 3);
        EXPECT_EQ(r.attr.ingress, 1u);
        EXPECT_EQ(r.attr.egress, 0u);
        ASSERT_EQ(r.pattern[0].type, RTE_FLOW_ITEM_TYPE_ETH);
        EXPECT_EQ(r.pattern[0].spec, nullptr);
        ASSERT_EQ(r.pattern[1].type, RTE_FLOW_ITEM_TYPE_IPV4);
        EXPECT_EQ(r.pattern[1].spec, nullptr);
        ASSERT_EQ(r.pattern[2].type, RTE_FLOW_ITEM_TYPE_UDP);
        ASSERT_EQ(r.pattern[3].type, RTE_FLOW_ITEM_TYPE_END);
        const auto* spec = static_cast<const rte_flow_item_udp*>(r.pattern[2].spec);
        const auto* mask = static_cast<const rte_flow_item_udp*>(r.pattern[2].mask);
        ASSERT_EQ(spec, &r.udp_spec);
        ASSERT_EQ(mask, &r.udp_mask);
        EXPECT_EQ(rte_be_to_cpu_16(spec->hdr.dst_port), 19521);
        EXPECT_EQ(rte_be_to_cpu_16(mask->hdr.dst_port), 0xffff);
        EXPECT_EQ(rte_be_to_cpu_16(spec->hdr.src_port), i);
        EXPECT_EQ(rte_be_to_cpu_16(mask->hdr.src_port), 0x3);
        EXPECT_EQ(mask->hdr.dgram_len, 0);
        EXPECT_EQ(mask->hdr.dgram_cksum, 0);
        ASSERT_EQ(r.actions[0].type, RTE_FLOW_ACTION_TYPE_QUEUE);
        EXPECT_EQ(static_cast<const rte_flow_action_queue*>(r.actions[0].conf)->index, i % 3);
        EXPECT_EQ(r.actions[1].type, RTE_FLOW_ACTION_TYPE_END);
    }
}

TEST(flow_rules, every_worker_gets_its_own_tag)
{
    for (std::uint16_t workers = 1; workers <= 17; ++workers) {
        const auto bits = tag_bits_for(workers);
        EXPECT_GE(1u << bits, workers);
        const auto rules = build_fabric_rules(4000, bits, workers);
        std::set<std::uint16_t> queues;
        for (const auto& r : rules) {
            EXPECT_LT(r->queue_index, workers);
            queues.insert(r->queue_index);
        }
        // An engine's tag is its worker index: that tag's rule must lead back to it.
        for (std::uint16_t w = 0; w < workers; ++w) {
            EXPECT_EQ(rules[w]->queue_index, w);
        }
        EXPECT_EQ(queues.size(), workers);
    }
}

TEST(flow_rules, single_worker_needs_one_catch_all_rule)
{
    const auto rules = build_fabric_rules(19521, 0, 1);
    ASSERT_EQ(rules.size(), 1u);
    EXPECT_EQ(rte_be_to_cpu_16(rules[0]->udp_mask.hdr.src_port), 0);
    EXPECT_EQ(rules[0]->queue_index, 0);
}

TEST(steering, software_steering_matches_the_rules)
{
    // fabric_owner() and the rules map a tag to the same worker.
    const auto rules = build_fabric_rules(19521, 3, 5);
    for (const auto& r : rules) {
        EXPECT_EQ(worker_of_tag(r->tag, 5), r->queue_index);
    }
}

} // namespace
} // namespace laps::app
