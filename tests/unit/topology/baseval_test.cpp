// baseVal and the uncongested delay.

#include "helpers.hpp"
#include "topology/baseval.hpp"
#include "topology/builders.hpp"
#include "topology/yaml_io.hpp"

#include <gtest/gtest.h>

using namespace laps::topology;
using namespace laps::topology::test;

namespace {

// A line h0 - s0 - s1 - ... - s(n-1) - h1 of equal links.
fabric line(std::size_t switches, double rate_gbps = 100, std::int64_t delay_ns = 1000)
{
    fabric_spec s;
    s.hosts = {{"h0", std::nullopt, no_group, {}}, {"h1", std::nullopt, no_group, {}}};
    std::string prev = "h0";
    for (std::size_t i = 0; i < switches; ++i) {
        const std::string name = indexed("s", i);
        s.switches.push_back({name, no_group, {}});
        s.links.push_back({prev, name, rate_gbps, delay_ns, 1, {}});
        prev = name;
    }
    s.links.push_back({prev, "h1", rate_gbps, delay_ns, 1, {}});
    return fabric(s);
}

std::vector<node_id> whole(const fabric& f)
{
    std::vector<node_id> p{0};
    for (node_id n = 2; n < f.node_count(); ++n) {
        p.push_back(n);
    }
    p.push_back(1);
    return p;
}

} // namespace

TEST(topology_baseval, one_switch_at_100g)
{
    // 1024 B at 100 Gb/s: 81.92 ns, rounded up to 82 as common::serialization_ns.
    const fabric f = line(1);
    const delay_model paper(f, {});
    EXPECT_EQ(paper.of(whole(f)), (path_delay{2 * 1082 + 5 * 82, 2 * 1082}));
    delay_options sim;
    parse_margin("per_link", sim);
    EXPECT_EQ(delay_model(f, sim).of(whole(f)), (path_delay{2 * 1082 + 2 * 82, 2 * 1082}));
    delay_options none;
    parse_margin("per_switch:0", none);
    EXPECT_EQ(delay_model(f, none).of(whole(f)), (path_delay{2164, 2164}));
    delay_options jumbo;
    jumbo.packet_bytes = 9000; // 720 ns at 100 Gb/s
    EXPECT_EQ(delay_model(f, jumbo).of(whole(f)), (path_delay{2 * 1720 + 5 * 720, 2 * 1720}));
}

TEST(topology_baseval, grows_with_hop_count_on_equal_links)
{
    for (const char* margin : {"per_switch", "per_link"}) {
        delay_options o;
        parse_margin(margin, o);
        path_delay prev{};
        for (std::size_t n = 1; n <= 8; ++n) {
            const fabric f = line(n);
            const auto d = delay_model(f, o).of(whole(f));
            EXPECT_GT(d.base_ns, prev.base_ns) << margin << " " << n;
            EXPECT_GT(d.uncongested_ns, prev.uncongested_ns);
            EXPECT_GT(d.base_ns, d.uncongested_ns);
            // Exactly one more link and one more forwarding node each time.
            if (n > 1) {
                EXPECT_EQ(d.uncongested_ns - prev.uncongested_ns, 1082);
                EXPECT_EQ(d.base_ns - prev.base_ns, 1082 + (o.margin == margin_mode::per_switch ? 5 : 1) * 82);
            }
            prev = d;
        }
    }
}

TEST(topology_baseval, slower_links_cost_more)
{
    const fabric fast = line(2, 100);
    const fabric slow = line(2, 10);
    EXPECT_LT(delay_model(fast, {}).of(whole(fast)).base_ns, delay_model(slow, {}).of(whole(slow)).base_ns);
    // Per switch, the margin counts the egress link: 2 switches at 10 Gb/s, 820 ns each.
    EXPECT_EQ(delay_model(slow, {}).of(whole(slow)).base_ns - delay_model(slow, {}).of(whole(slow)).uncongested_ns,
              5 * 2 * 820);
}

TEST(topology_baseval, shared_sums_equal_the_reference)
{
    // combine() over all hosts of an asymmetric fabric, including relaying hosts.
    const fabric f = load_fabric(source_path("configs/topologies/leaf_spine_asymmetric.yaml"));
    const routing r(f);
    for (const char* margin : {"per_switch", "per_link:1.5"}) {
        delay_options o;
        parse_margin(margin, o);
        const path_planner planner(r, parse_path_options("yen:k=8,stretch=2"), o);
        for (node_id src = 0; src < f.host_count(); src += 3) {
            const auto spec = planner.table(src);
            std::size_t pid = 0;
            for (node_id dst = 0; dst < f.host_count(); ++dst) {
                if (dst == src) {
                    continue;
                }
                for (const auto& c : planner.candidates(src, dst)) {
                    EXPECT_EQ(spec.pit[pid].base_ns, c.delay.base_ns);
                    EXPECT_EQ(spec.pit[pid].uncongested_ns, c.delay.uncongested_ns);
                    EXPECT_EQ(c.delay, planner.delays().of(c.nodes));
                    ++pid;
                }
            }
        }
    }
    // Rail: hosts relay over NVLink, so the core paths start and end at hosts.
    const fabric rail(rail_spec({.clusters = 3, .gpus = 3, .nvlink_rate_gbps = 900}));
    const routing rr(rail);
    const path_planner rp(rr, {}, {});
    const auto spec = rp.table(4);
    std::size_t pid = 0;
    for (node_id dst = 0; dst < rail.host_count(); ++dst) {
        if (dst == 4) {
            continue;
        }
        for (const auto& c : rp.candidates(4, dst)) {
            EXPECT_EQ(spec.pit[pid++].base_ns, rp.delays().of(c.nodes).base_ns);
        }
    }
}

TEST(topology_baseval, margin_text)
{
    delay_options o;
    parse_margin("per_link:2", o);
    EXPECT_EQ(o.margin, margin_mode::per_link);
    EXPECT_EQ(o.margin_packets, 2.0);
    parse_margin("per_switch", o);
    EXPECT_EQ(o.margin, margin_mode::per_switch);
    EXPECT_EQ(o.margin_packets, 5.0);
    EXPECT_THROW(parse_margin("per_hop", o), topology_error);
    EXPECT_THROW(parse_margin("per_link:-1", o), topology_error);
    EXPECT_THROW(parse_margin("per_link:x", o), topology_error);
}
