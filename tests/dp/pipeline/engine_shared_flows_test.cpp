// Engines on one shared flow index (pipeline/flow_slots.hpp, the testbed's
// thousands of hosts): each keeps its own flows, and hands out flow slots,
// hence flow ids, exactly as an engine with its own rte_hash does.
#include "harness.hpp"
#include "pipeline/flow_slots.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace laps;
using namespace laps::test;

namespace {

struct shared_flows : ::testing::Test {
    pool_ptr frames = make_pool("sf_frames", 4096);
    pool_ptr control = make_pool("sf_control", 4096, wire::header_mbuf_data_room);

    void TearDown() override
    {
        EXPECT_EQ(in_use(frames.get()), 0u);
        EXPECT_EQ(in_use(control.get()), 0u);
    }

    // The flow ids of the DATA `a` sends for one frame each of `ports`
    // (one flow per source port), sent at `now` and answered by `b`.
    // `from` is the sender's own address: in a shared index send keys stay
    // apart by it (flow_slots.hpp).
    std::vector<std::uint32_t> send_one_each(pipeline::engine& a, pipeline::engine& b,
                                             const std::vector<std::uint16_t>& ports, common::time_ns now,
                                             const char* from = "10.0.0.1")
    {
        std::vector<std::uint32_t> ids;
        for (const auto port : ports) {
            const bytes body(64, 0);
            const bytes frame = packet_builder()
                                    .eth(mac_of(2), mac_of(1))
                                    .ipv4(from, "10.0.0.2")
                                    .udp(port, 5000)
                                    .payload(std::span<const std::uint8_t>(body))
                                    .build();
            rte_mbuf* m = to_mbuf(frames.get(), frame);
            EXPECT_EQ(a.from_host(&m, 1, now), 1);
        }
        auto data = take_fabric(a);
        for (auto* p : data) {
            const auto r = wire::parse(p);
            if (r.ok() && r.packet.header.type == wire::packet_type::data) {
                ids.push_back(r.packet.header.flow_id);
            }
        }
        b.from_fabric(data.data(), static_cast<std::uint16_t>(data.size()), now + 500);
        free_all(take_host(b));
        auto acks = take_fabric(b);
        a.from_fabric(acks.data(), static_cast<std::uint16_t>(acks.size()), now + 1000);
        free_all(take_fabric(a));
        return ids;
    }
};

} // namespace

TEST_F(shared_flows, SlotsAndFlowIdsMatchAnEngineWithItsOwnTable)
{
    // Same config, same frames, same clock: one engine on its own rte_hash,
    // one on a shared index beside a neighbour that takes slots of its own.
    pipeline::flow_index index("sf_index", 64, 64, 64, SOCKET_ID_ANY);
    auto own_config = one_path_sender_config("sf_own", control.get(), 7);
    own_config.algo.tables.flow_capacity = 8;
    own_config.flow_idle_ns = 1'000'000;
    auto shared_config = own_config;
    shared_config.name = "sf_shared";
    shared_config.shared_flows = &index;
    shared_config.flow_index_tag = 1;
    auto neighbour_config = shared_config;
    neighbour_config.name = "sf_neighbour";
    neighbour_config.flow_index_tag = 2;
    neighbour_config.outer.own_ip = 0x0a000003;
    pipeline::engine own(own_config);
    pipeline::engine shared(shared_config);
    pipeline::engine neighbour(neighbour_config);
    pipeline::engine own_peer(host_config("sf_own_peer", 2, control.get()));
    pipeline::engine shared_peer(host_config("sf_shared_peer", 2, control.get()));

    // Six flows, with the neighbour's three on the same ports.
    const std::vector<std::uint16_t> first = {1, 2, 3, 4, 5, 6};
    const auto own_first = send_one_each(own, own_peer, first, 1000);
    EXPECT_EQ(own_first.size(), first.size());
    EXPECT_EQ(own_first, send_one_each(shared, shared_peer, first, 1000));
    EXPECT_EQ(send_one_each(neighbour, shared_peer, {1, 2, 3}, 1000, "10.0.0.3").size(), 3u);
    // Both keep their PST row for the same destination in the index, apart:
    // two rows, where keys without the owner would make them one.
    EXPECT_EQ(rte_hash_count(index.destinations().table()), 2);
    EXPECT_EQ(shared.pst().find(*tables::address::parse("10.0.0.2")), own.pst().find(*tables::address::parse("10.0.0.2")));
    // Past flow_idle: the engines forget the flows, slots going back in the
    // order the aging finds them.
    for (common::time_ns t = 2000; t < 3'000'000; t += 1000) {
        own.poll(t);
        shared.poll(t);
    }
    ASSERT_EQ(own.active_flows(), 0u);
    ASSERT_EQ(shared.active_flows(), 0u);
    EXPECT_EQ(own.counters().flow_evicted_idle, shared.counters().flow_evicted_idle);
    // Ten new flows into eight slots: reused slots, new generations, the
    // last two refused; the same ids on both.
    const std::vector<std::uint16_t> second = {11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    const auto own_ids = send_one_each(own, own_peer, second, 4'000'000);
    EXPECT_EQ(own_ids.size(), 8u);
    EXPECT_EQ(own_ids, send_one_each(shared, shared_peer, second, 4'000'000));
    EXPECT_NE(std::vector<std::uint32_t>(own_ids.begin(), own_ids.begin() + 6), own_first); // new generations
    EXPECT_EQ(own.counters().host_drop_flow_table_full, shared.counters().host_drop_flow_table_full);
    EXPECT_EQ(own.counters().host_drop_flow_table_full, 2u);
    own.release_all();
    shared.release_all();
    neighbour.release_all();
    own_peer.release_all();
    shared_peer.release_all();
}

TEST_F(shared_flows, ReceiversOnOneIndexKeepTheSameSendersFlowApart)
{
    // Two receivers get copies of the same sender's DATA (same source, flow
    // id and epoch): their keys differ only by their tag. Receiver one holds
    // an earlier flow in slot 0, so the copies land in different slots: were
    // the keys the same, the second receiver's entry would replace the
    // first's and one of them would deliver into the wrong flow.
    pipeline::flow_index index("sf_rx_index", 16, 16, 16, SOCKET_ID_ANY);
    auto receiver_config = in_order_receiver_config("sf_rx1", control.get());
    receiver_config.algo.tables.flow_capacity = 4;
    receiver_config.shared_flows = &index;
    receiver_config.flow_index_tag = 1;
    pipeline::engine one(receiver_config);
    receiver_config.name = "sf_rx2";
    receiver_config.flow_index_tag = 2;
    pipeline::engine two(receiver_config);
    pipeline::engine early(one_path_sender_config("sf_early", control.get(), 5));
    pipeline::engine sender(one_path_sender_config("sf_tx", control.get(), 9));

    // The earlier flow into receiver one only.
    rte_mbuf* m = to_mbuf(frames.get(), data_frame(100, 64, 40));
    ASSERT_EQ(early.from_host(&m, 1, 1000), 1);
    auto data = take_fabric(early);
    one.from_fabric(data.data(), static_cast<std::uint16_t>(data.size()), 2000);
    EXPECT_EQ(host_frame_ids(one), std::vector<std::uint32_t>{100});
    free_all(take_fabric(one));

    std::vector<std::uint32_t> sent;
    for (std::uint32_t id = 0; id < 16; ++id) {
        m = to_mbuf(frames.get(), data_frame(id, 64, 41));
        ASSERT_EQ(sender.from_host(&m, 1, 3000 + id), 1);
        sent.push_back(id);
    }
    std::vector<std::uint32_t> got_one;
    std::vector<std::uint32_t> got_two;
    for (common::time_ns t = 3000; got_two.size() < sent.size() && t < 10'000'000; t += 1000) {
        sender.poll(t);
        for (auto* p : take_fabric(sender)) {
            rte_mbuf* copy = rte_pktmbuf_copy(p, frames.get(), 0, UINT32_MAX);
            ASSERT_NE(copy, nullptr);
            one.from_fabric(&p, 1, t);
            two.from_fabric(&copy, 1, t);
        }
        for (auto id : host_frame_ids(one)) {
            got_one.push_back(id);
        }
        for (auto id : host_frame_ids(two)) {
            got_two.push_back(id);
        }
        free_all(take_fabric(one));
        auto acks = take_fabric(two); // one receiver answers
        sender.from_fabric(acks.data(), static_cast<std::uint16_t>(acks.size()), t);
    }
    EXPECT_EQ(got_one, sent);
    EXPECT_EQ(got_two, sent);
    EXPECT_EQ(one.counters().receiver_flow_created, 2u);
    EXPECT_EQ(two.counters().receiver_flow_created, 1u);
    EXPECT_EQ(one.counters().data_drop_duplicate, 0u);
    EXPECT_EQ(two.counters().data_drop_duplicate, 0u);
    early.release_all();
    sender.release_all();
    one.release_all();
    two.release_all();
}
