// Bounded flow state: a full flow table is counted, idle flows are evicted,
// a full flow queue stops the engine taking host frames (backpressure), and
// a full window holds new data until ACKs come back.
#include "harness.hpp"
#include "wire/bytes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <memory>

using namespace laps;
using namespace laps::test;

namespace {

struct flows : ::testing::Test {
    pool_ptr frames = make_pool("fl_frames", 2048);
    pool_ptr control = make_pool("fl_control", 2048, wire::header_mbuf_data_room);

    pipeline::engine_config config(const std::string& name)
    {
        auto c = host_config(name, 1, control.get());
        c.algo.paths.pit = {path_row(0, 10'000, {})};
        c.algo.paths.pst = {{tables::address::ipv4(0x0a000002), {0}}};
        c.algo.tables.flow_capacity = 8;
        c.flow_idle_ns = 1'000'000;
        return c;
    }

    void TearDown() override
    {
        EXPECT_EQ(in_use(frames.get()), 0u);
        EXPECT_EQ(in_use(control.get()), 0u);
    }
};

// Runs `a` alone from `now` to `end`, event by event (next_event), handing
// every packet it sends to the fabric to `sent`, which frees it.
template <typename Sent>
void run_alone(pipeline::engine& a, common::time_ns& now, common::time_ns end, Sent&& sent)
{
    while (true) {
        for (auto* m : take_fabric(a)) {
            sent(m);
        }
        const common::time_ns next = a.next_event(now);
        if (next >= end) {
            return;
        }
        now = std::max(next, now + 1);
        a.poll(now);
    }
}

} // namespace

TEST_F(flows, FullFlowTableIsCountedAndIdleFlowsAreEvicted)
{
    pipeline::engine a(config("fl_table"));
    pipeline::engine b(host_config("fl_table_b", 2, control.get()));
    // Nine flows (source ports) into a table of eight; rte_hash's extendable
    // table may hold a few more than asked, so keep going until one is refused.
    std::uint16_t port = 1;
    for (; port <= 64 && a.counters().host_drop_flow_table_full == 0; ++port) {
        rte_mbuf* m = to_mbuf(frames.get(), data_frame(port, 64, port));
        ASSERT_EQ(a.from_host(&m, 1, 1000), 1);
    }
    EXPECT_EQ(a.counters().host_drop_flow_table_full, 1u);
    EXPECT_GE(a.active_flows(), 8u);
    const auto created = a.counters().flow_created;

    // Let every packet be acknowledged, then idle past flow_idle_ns.
    auto data = take_fabric(a);
    b.from_fabric(data.data(), static_cast<std::uint16_t>(data.size()), 2000);
    free_all(take_host(b));
    auto acks = take_fabric(b);
    a.from_fabric(acks.data(), static_cast<std::uint16_t>(acks.size()), 3000);
    for (common::time_ns t = 2'000'000; a.active_flows() > 0 && t < 3'000'000; t += 1000) {
        a.poll(t);
    }
    EXPECT_EQ(a.active_flows(), 0u);
    EXPECT_EQ(a.counters().flow_evicted_idle, created);

    // Room again: a new flow is taken.
    rte_mbuf* m = to_mbuf(frames.get(), data_frame(999, 64, 999));
    ASSERT_EQ(a.from_host(&m, 1, 3'000'000), 1);
    EXPECT_EQ(a.counters().flow_created, created + 1);
    free_all(take_fabric(a));
}

// The exact-match cache (pipeline/flow_cache.hpp) remembered the evicted
// flow's slot: the flow's next frame must start a new flow with a new
// flow_id, whose ACK finds it, not land in the dead slot.
TEST_F(flows, AnEvictedFlowStartsAgainUnderANewFlowId)
{
    pipeline::engine a(config("fl_again"));
    pipeline::engine b(host_config("fl_again_b", 2, control.get()));
    const auto exchange = [&](std::uint32_t id, common::time_ns now) {
        rte_mbuf* m = to_mbuf(frames.get(), data_frame(id, 64, 7));
        EXPECT_EQ(a.from_host(&m, 1, now), 1);
        auto data = take_fabric(a); // the DATA, and a probe of its path (Alg. 1)
        std::uint32_t flow_id = 0;
        int data_packets = 0;
        for (auto* p : data) {
            const auto r = wire::parse(p);
            if (r.packet.header.type == wire::packet_type::data) {
                flow_id = r.packet.header.flow_id;
                ++data_packets;
            }
        }
        EXPECT_EQ(data_packets, 1);
        b.from_fabric(data.data(), static_cast<std::uint16_t>(data.size()), now + 500);
        free_all(take_host(b));
        auto acks = take_fabric(b);
        a.from_fabric(acks.data(), static_cast<std::uint16_t>(acks.size()), now + 1000);
        return flow_id;
    };
    const std::uint32_t first = exchange(0, 1000);
    for (common::time_ns t = 2'000'000; a.active_flows() > 0 && t < 3'000'000; t += 1000) {
        a.poll(t);
    }
    ASSERT_EQ(a.counters().flow_evicted_idle, 1u);
    const std::uint32_t second = exchange(1, 3'000'000);
    EXPECT_EQ(a.counters().flow_created, 2u);
    EXPECT_EQ(a.active_flows(), 1u);
    EXPECT_NE(second, first);
    EXPECT_EQ(a.counters().ack_rx, 2u);
    EXPECT_EQ(a.counters().ack_drop_unknown_flow, 0u);
    EXPECT_EQ(a.unfinished_frames(), 0u);
}

TEST_F(flows, FullFlowQueueStopsTakingHostFramesAndFullWindowHoldsData)
{
    auto c = config("fl_queue");
    c.flow_queue_packets = 4;
    c.algo.retransmit.window_packets = 8;
    pipeline::engine a(c);
    std::vector<rte_mbuf*> in;
    for (std::uint32_t i = 0; i < 20; ++i) {
        in.push_back(to_mbuf(frames.get(), data_frame(i, 64)));
    }
    // Window 8 sends 8; the queue holds 4 more; the 13th is refused, and
    // with it every later frame of the flow (its order holds).
    const std::vector<rte_mbuf*> offered = in;
    const std::uint16_t taken = a.from_host(in.data(), 20, 1000);
    EXPECT_EQ(taken, 12);
    EXPECT_EQ(a.counters().host_backpressure, 1u);
    EXPECT_EQ(a.counters().data_sent, 8u);
    EXPECT_GT(a.counters().send_window_full, 0u);
    for (std::size_t i = 0; i < 20u - taken; ++i) {
        EXPECT_EQ(in[i], offered[12 + i]) << "refused frames at the front, in order";
        rte_pktmbuf_free(in[i]); // the caller still owns what was refused
    }
    free_all(take_fabric(a));
}

// A caller that holds refused frames offers them again only once their
// flow has made room (room_for_refused), and offers new frames behind them
// meanwhile (from_host_behind): a flow that refused refuses those too, even
// with room, so its frames still reach the receiver in order; another
// flow's frame is taken at once.
TEST_F(flows, RefusedFramesWaitForRoomWhileNewFramesGoBehindThem)
{
    auto c = config("fl_behind");
    c.flow_queue_packets = 4;
    c.algo.retransmit.window_packets = 8;
    c.algo.selection.probing = false;
    pipeline::engine a(c);
    pipeline::engine b(host_config("fl_behind_b", 2, control.get()));
    common::time_ns now = 1000;

    std::vector<rte_mbuf*> held; // the caller's backlog, oldest first
    for (std::uint32_t i = 0; i < 16; ++i) {
        held.push_back(to_mbuf(frames.get(), data_frame(i, 64, 1)));
    }
    ASSERT_EQ(a.from_host(held.data(), 16, now), 12); // 8 in flight, 4 queued
    held.resize(4);                                    // 12..15
    const auto before = a.room_for_refused();

    std::array<rte_mbuf*, 2> more{to_mbuf(frames.get(), data_frame(16, 64, 1)),
                                  to_mbuf(frames.get(), data_frame(100, 64, 2))};
    ASSERT_EQ(a.from_host_behind(more.data(), 2, now), 1) << "flow 2's frame taken, flow 1's refused";
    held.push_back(more[0]);

    // The 8 in flight are ACKed: the window opens, flow 1's queue sends its 4.
    std::map<std::uint16_t, std::vector<std::uint32_t>> delivered; // by source port
    const auto exchange = [&] {
        auto data = take_fabric(a);
        b.from_fabric(data.data(), static_cast<std::uint16_t>(data.size()), now + 500);
        for (auto* h : take_host(b)) {
            const bytes frame = from_mbuf(h);
            delivered[wire::load_be16(frame.data() + 34)].push_back(frame_id(frame));
            rte_pktmbuf_free(h);
        }
        auto acks = take_fabric(b);
        now += 1000;
        a.from_fabric(acks.data(), static_cast<std::uint16_t>(acks.size()), now);
        a.poll(now);
    };
    exchange();
    const auto after = a.room_for_refused();
    EXPECT_EQ(after.freed - before.freed, 4u) << "room for 4 of the refused frames";
    EXPECT_EQ(after.changes, before.changes);

    rte_mbuf* next = to_mbuf(frames.get(), data_frame(17, 64, 1));
    EXPECT_EQ(a.from_host_behind(&next, 1, now), 0) << "behind 12..16: refused though the queue has room";
    held.push_back(next);
    const std::uint16_t first = a.from_host(held.data(), static_cast<std::uint16_t>(held.size()), now);
    EXPECT_GE(first, 4) << "at least the queue's room";
    held.erase(held.begin(), held.begin() + first);
    for (int round = 0; round < 50 && (!held.empty() || a.unfinished_frames() > 0); ++round) {
        exchange();
        const auto took = a.from_host(held.data(), static_cast<std::uint16_t>(held.size()), now);
        held.erase(held.begin(), held.begin() + took);
    }
    ASSERT_TRUE(held.empty());
    std::vector<std::uint32_t> in_order(18);
    for (std::uint32_t i = 0; i < 18; ++i) {
        in_order[i] = i;
    }
    EXPECT_EQ(delivered[1], in_order);
    EXPECT_EQ(delivered[2], std::vector<std::uint32_t>{100});
    EXPECT_EQ(a.counters().host_rx, 19u);
}

// from_host classifies and looks flows up 32 frames at a time: frames the
// lookup skips (non-IP, unknown destination) must not shift the others onto
// wrong flows, and backpressure in a later group still stops at the right frame.
TEST_F(flows, LongBurstsKeepEveryFrameOnItsOwnFlow)
{
    auto c = config("fl_long");
    c.algo.tables.flow_capacity = 64;
    c.flow_queue_packets = 4;
    c.algo.retransmit.window_packets = 8;
    pipeline::engine a(c);
    const bytes arp = packet_builder().eth(mac_of(0xff), mac_of(1)).ethertype(0x0806).payload(28).build();
    std::vector<rte_mbuf*> in;
    for (std::uint32_t i = 0; i < 32; ++i) {
        if (i % 4 == 1) {
            in.push_back(to_mbuf(frames.get(), arp));
        } else if (i % 4 == 2) {
            in.push_back(to_mbuf(frames.get(),
                                 packet_builder().eth(mac_of(9), mac_of(1)).ipv4("10.0.0.1", "10.0.0.9").udp(1, 2).build()));
        } else {
            in.push_back(to_mbuf(frames.get(), data_frame(i, 64, static_cast<std::uint16_t>(100 + i)))); // own flow
        }
    }
    for (std::uint32_t i = 32; i < 60; ++i) {
        in.push_back(to_mbuf(frames.get(), data_frame(i, 64, 7))); // one flow
    }
    // 32 in the first group; then the one flow sends 8 (window), queues 4,
    // and refuses its 13th frame, frame 44, and the 15 after it.
    const std::vector<rte_mbuf*> offered = in;
    const std::uint16_t taken = a.from_host(in.data(), static_cast<std::uint16_t>(in.size()), 1000);
    for (std::size_t i = 0; i < in.size() - taken; ++i) {
        EXPECT_EQ(in[i], offered[44 + i]) << "refused frames at the front, in order";
    }
    EXPECT_EQ(taken, 44);
    EXPECT_EQ(a.counters().host_backpressure, 1u);
    EXPECT_EQ(a.counters().host_rx, 44u);
    EXPECT_EQ(a.counters().host_passthrough_non_ip, 8u);
    EXPECT_EQ(a.counters().host_passthrough_unknown_dst, 8u);
    EXPECT_EQ(a.counters().flow_created, 17u);
    EXPECT_EQ(a.counters().data_sent, 16u + 8u);

    // Each of the 16 single-frame flows sent its own frame as sequence 0.
    std::map<std::uint32_t, std::vector<std::uint32_t>> seqs_by_flow;
    for (rte_mbuf* m : take_fabric(a)) {
        const auto r = wire::parse(m);
        if (r.ok()) {
            seqs_by_flow[r.packet.header.flow_id].push_back(r.packet.header.seq);
            const bytes inner = from_mbuf(m);
            const std::uint32_t id = frame_id(bytes(inner.begin() + r.packet.inner_offset, inner.end()));
            if (id < 32) {
                EXPECT_EQ(r.packet.header.seq, 0u) << "frame " << id;
                EXPECT_NE(id % 4, 1u);
                EXPECT_NE(id % 4, 2u);
            } else {
                EXPECT_EQ(r.packet.header.seq, id - 32) << "frame " << id;
            }
        }
        rte_pktmbuf_free(m);
    }
    EXPECT_EQ(seqs_by_flow.size(), 17u);
    for (std::size_t i = 0; i < in.size() - taken; ++i) {
        rte_pktmbuf_free(in[i]); // the caller still owns what was refused
    }
}

// Console edits (pit/pst add and del) on a running engine: a destination added
// at run time carries traffic; deleting it tears its flows down and frees
// every frame they held; edits that would break the tables are refused.
TEST_F(flows, TablesEditedAtRunTime)
{
    auto c = config("fl_edit");
    pipeline::engine a(c);
    const auto dst3 = tables::address::ipv4(0x0a000003);

    tables::pit_row r = path_row(7, 20'000, {42});
    a.add_path(r);
    EXPECT_THROW(a.add_path(r), tables::table_error); // pid 7 twice
    const tables::path_id pids[] = {7};
    a.add_destination(dst3, pids);
    EXPECT_THROW(a.add_destination(dst3, pids), pipeline::engine_error);
    const tables::path_id used[] = {0};
    EXPECT_THROW(a.add_destination(tables::address::ipv4(0x0a000004), used), tables::table_error);
    EXPECT_THROW(a.remove_path(7), tables::table_error); // serves 10.0.0.3

    const bytes to3 = packet_builder().eth(mac_of(3), mac_of(1)).ipv4("10.0.0.1", "10.0.0.3").udp(7, 7).payload(100).build();
    rte_mbuf* m[3] = {to_mbuf(frames.get(), to3), to_mbuf(frames.get(), to3), to_mbuf(frames.get(), to3)};
    ASSERT_EQ(a.from_host(m, 3, 1000), 3);
    auto out = take_fabric(a);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(wire::parse(out[0]).packet.header.pid, 7);
    EXPECT_EQ(wire::parse(out[0]).packet.dst_ip, 0x0a000003u);
    free_all(out);

    // The three frames are held for resend until deleted with their destination.
    EXPECT_EQ(in_use(frames.get()), 3u);
    a.remove_destination(dst3);
    EXPECT_EQ(in_use(frames.get()), 0u);
    EXPECT_EQ(a.counters().flow_removed_with_destination, 1u);
    EXPECT_EQ(a.counters().data_drop_destination_removed, 3u);
    EXPECT_THROW(a.remove_destination(dst3), pipeline::engine_error);

    // Its frames are now to an unknown destination, and its pid can go.
    rte_mbuf* again = to_mbuf(frames.get(), to3);
    ASSERT_EQ(a.from_host(&again, 1, 2000), 1);
    EXPECT_EQ(a.counters().host_passthrough_unknown_dst, 1u);
    free_all(take_fabric(a));
    a.remove_path(7);
    EXPECT_FALSE(a.paths().contains(7));
}

// Two workers of one sender (same address, tags 0 and 1) both start their
// first flow in slot 0: the tag in the flow id keeps them apart at a receiver
// with a single engine, so neither flow's packets look like the other's
// duplicates.
TEST_F(flows, WorkerTagsKeepFlowIdsOfOneSenderApart)
{
    auto c0 = config("fl_tag0");
    c0.entropy_tag_bits = 1;
    c0.workers = 2;
    c0.worker = 0;
    auto c1 = config("fl_tag1");
    c1.entropy_tag_bits = 1;
    c1.workers = 2;
    c1.worker = 1;
    pipeline::engine w0(c0);
    pipeline::engine w1(c1);
    pipeline::engine b(host_config("fl_tag_b", 2, control.get()));
    for (std::uint32_t i = 0; i < 5; ++i) {
        rte_mbuf* m0 = to_mbuf(frames.get(), data_frame(i, 64, 1));
        rte_mbuf* m1 = to_mbuf(frames.get(), data_frame(100 + i, 64, 2));
        ASSERT_EQ(w0.from_host(&m0, 1, 1000), 1);
        ASSERT_EQ(w1.from_host(&m1, 1, 1000), 1);
    }
    auto d0 = take_fabric(w0);
    auto d1 = take_fabric(w1);
    ASSERT_EQ(d0.size(), 5u);
    ASSERT_NE(wire::parse(d0[0]).packet.header.flow_id, wire::parse(d1[0]).packet.header.flow_id);
    b.from_fabric(d0.data(), 5, 2000);
    b.from_fabric(d1.data(), 5, 2000);
    EXPECT_EQ(b.counters().data_delivered, 10u);
    EXPECT_EQ(b.counters().data_drop_duplicate, 0u);
    EXPECT_EQ(b.active_receive_flows(), 2u);
    free_all(take_host(b));
    auto acks = take_fabric(b);
    // Each worker takes its own ACKs; the other's are unknown to it.
    w0.from_fabric(acks.data(), static_cast<std::uint16_t>(acks.size()), 3000);
    EXPECT_EQ(w0.counters().ack_drop_unknown_flow, 5u);
    // Half the answer packets are worker 1's (5 ACKs, or 1 ACK_RUN when coalesced): their tag names worker 1.
    EXPECT_EQ(w0.counters().fabric_rx_wrong_worker, acks.size() / 2);
    EXPECT_EQ(w0.unfinished_frames(), 0u);
    EXPECT_EQ(w1.unfinished_frames(), 5u);
}

// A receiver forgets a flow that stays silent for 4 x flow_idle_ns while the
// sender still has it (here: all acknowledged, the sender's idle time much
// longer). When the sender resumes far beyond the receiver's window, the
// window offset in its DATA lets the receiver start the flow where it is,
// instead of at 0, where every packet would be beyond the window forever.
// The flow's next DATA has the key of the receiver's last one: the
// receiver's last-flow shortcut must not hand it the forgotten slot
// (receiver_flow_created stays 1 if it does).
TEST_F(flows, ReceiverThatForgotAFlowPicksItUpWhereTheSenderIs)
{
    auto ac = config("fl_forget_a");
    ac.flow_idle_ns = 1'000'000'000; // the sender keeps its flow
    ac.flow_queue_packets = 256;
    pipeline::engine a(ac);
    auto bc = host_config("fl_forget_b", 2, control.get());
    bc.flow_idle_ns = 1000; // the receiver forgets after 4 us
    bc.in_order = true;
    pipeline::engine b(bc);

    common::time_ns now = 1000;
    std::uint32_t delivered = 0;
    const auto exchange = [&](std::uint32_t first, std::uint32_t count) {
        for (std::uint32_t i = first; i < first + count; ++i) {
            rte_mbuf* m = to_mbuf(frames.get(), data_frame(i, 64));
            ASSERT_EQ(a.from_host(&m, 1, now), 1);
            auto data = take_fabric(a);
            b.from_fabric(data.data(), static_cast<std::uint16_t>(data.size()), now + 500);
            for (auto* h : take_host(b)) {
                EXPECT_EQ(frame_id(from_mbuf(h)), delivered);
                ++delivered;
                rte_pktmbuf_free(h);
            }
            auto acks = take_fabric(b);
            a.from_fabric(acks.data(), static_cast<std::uint16_t>(acks.size()), now + 1000);
            now += 100;
        }
    };
    exchange(0, 150); // more than B's window of 64
    for (int i = 0; i < 200; ++i) { // B's clock hand finds the idle flow
        b.poll(now + 100'000 + i);
    }
    EXPECT_EQ(b.counters().receiver_flow_evicted_idle, 1u);
    EXPECT_EQ(a.active_flows(), 1u);
    now += 200'000;
    exchange(150, 100);
    EXPECT_EQ(delivered, 250u);
    EXPECT_EQ(b.counters().data_drop_beyond_window, 0u);
    EXPECT_EQ(b.counters().receiver_flow_created, 2u);
    EXPECT_EQ(a.unfinished_frames(), 0u);
}

// A receiver holding frames behind a gap names the gap's timeout as its next
// event (docs/pipeline.md "Receiver guarantees"): a virtual-time caller
// (the testbed) wakes it then, not at its next housekeeping poll, and the
// gap is given up exactly reorder_timeout_ns after the frame behind it came.
TEST_F(flows, ReorderTimeoutIsTheReceiversNextEvent)
{
    auto ac = config("fl_gap_a");
    ac.algo.selection.probing = false; // the fabric output is the three DATA
    pipeline::engine a(ac);
    auto bc = host_config("fl_gap_b", 2, control.get());
    bc.in_order = true;
    bc.reorder_timeout_ns = 40'000;
    pipeline::engine b(bc);

    std::vector<rte_mbuf*> in;
    for (std::uint32_t i = 0; i < 3; ++i) {
        in.push_back(to_mbuf(frames.get(), data_frame(i, 64)));
    }
    ASSERT_EQ(a.from_host(in.data(), 3, 1000), 3);
    auto data = take_fabric(a);
    ASSERT_EQ(data.size(), 3u);
    rte_pktmbuf_free(data[1]); // frame 1 lost: frame 2 waits behind the gap
    constexpr common::time_ns arrival = 2000;
    rte_mbuf* kept[] = {data[0], data[2]};
    b.from_fabric(kept, 2, arrival);
    auto delivered = take_host(b);
    ASSERT_EQ(delivered.size(), 1u);
    EXPECT_EQ(frame_id(from_mbuf(delivered[0])), 0u);
    free_all(delivered);
    free_all(take_fabric(b));
    EXPECT_EQ(b.reorder_held(), 1u);

    EXPECT_EQ(b.next_event(arrival), arrival + 40'000);
    b.poll(arrival + 40'000 - 1);
    EXPECT_TRUE(take_host(b).empty());
    b.poll(b.next_event(arrival + 1));
    delivered = take_host(b);
    ASSERT_EQ(delivered.size(), 1u);
    EXPECT_EQ(frame_id(from_mbuf(delivered[0])), 2u);
    free_all(delivered);
    EXPECT_EQ(b.counters().reorder_timeout, 1u);
    EXPECT_EQ(b.reorder_held(), 0u);
    EXPECT_EQ(b.next_event(arrival + 40'000), std::numeric_limits<common::time_ns>::max());
    a.release_all();
}

// port_rate_bps holds the sum of all flows to the NIC's rate: four flows,
// each allowed line rate by AIMD, together leave at 10 Gb/s.
TEST_F(flows, PortRateLimitsAllFlowsTogether)
{
    auto c = config("fl_port");
    c.port_rate_bps = 10e9;
    c.flow_queue_packets = 256;
    c.algo.retransmit.window_packets = 1024;
    c.algo.tables.flow_capacity = 64;
    pipeline::engine a(c);
    std::vector<rte_mbuf*> in;
    for (std::uint32_t i = 0; i < 400; ++i) {
        in.push_back(to_mbuf(frames.get(), data_frame(i, 1000, static_cast<std::uint16_t>(1 + i % 4))));
    }
    ASSERT_EQ(a.from_host(in.data(), 400, 0), 400);
    std::uint64_t wire_bytes = 0;
    common::time_ns now = 0;
    const auto count = [&](rte_mbuf* m) {
        wire_bytes += m->pkt_len;
        rte_pktmbuf_free(m);
    };
    run_alone(a, now, 100'000, count); // 100 us
    for (auto* m : take_fabric(a)) {
        count(m);
    }
    // 10 Gb/s for 100 us is 125 kB, plus one burst; the packets counted by
    // the pacer include the largest LAPS header, so a little less goes out.
    const double limit = 10e9 / 8 * 100e-6 + c.algo.congestion.pacer_burst_bytes;
    EXPECT_LE(static_cast<double>(wire_bytes), limit);
    EXPECT_GE(static_cast<double>(wire_bytes), 0.85 * 10e9 / 8 * 100e-6);
    EXPECT_LT(a.counters().data_sent, 400u);
}

// A flow that finds the NIC's port busy keeps its turn (engine::keep_turn):
// a mouse that arrives while an elephant holds the port leaves within a
// packet or two, not after the elephant's backlog. Before, the flow that
// found the port busy went to the back of the ready list and the elephant
// took every slot the port freed (testbed rail_datamining: a two-frame flow
// waited 22 ms behind a 263 MB one on the same host).
TEST_F(flows, PortRateServesAMouseBesideAnElephantInTurn)
{
    auto c = config("fl_turn");
    c.port_rate_bps = 10e9;
    c.flow_queue_packets = 256;
    c.algo.retransmit.window_packets = 1024;
    c.algo.retransmit.min_timeout_ns = 10'000'000; // no resends in this run
    pipeline::engine a(c);
    std::vector<rte_mbuf*> elephant;
    for (std::uint32_t i = 0; i < 200; ++i) {
        elephant.push_back(to_mbuf(frames.get(), data_frame(i, 1000, 1)));
    }
    ASSERT_EQ(a.from_host(elephant.data(), 200, 0), 200);
    std::vector<std::uint32_t> order; // DATA frame ids in the order they leave
    common::time_ns now = 0;
    const auto record = [&](rte_mbuf* m) {
        const auto r = wire::parse(m, c.outer.udp_port, 0);
        if (r.ok() && r.packet.header.type == wire::packet_type::data) {
            const bytes packet = from_mbuf(m);
            order.push_back(frame_id(bytes(packet.begin() + r.packet.inner_offset, packet.end())));
        }
        rte_pktmbuf_free(m);
    };
    const auto run_until = [&](common::time_ns end) { run_alone(a, now, end, record); };
    run_until(10'000); // the elephant alone holds the port
    const std::size_t before = order.size();
    ASSERT_GT(before, 5u);
    std::vector<rte_mbuf*> mouse{to_mbuf(frames.get(), data_frame(1000, 1000, 2)),
                                 to_mbuf(frames.get(), data_frame(1001, 1000, 2))};
    ASSERT_EQ(a.from_host(mouse.data(), 2, now), 2);
    run_until(now + 30'000);
    const auto at = [&](std::uint32_t id) {
        return static_cast<std::size_t>(std::find(order.begin(), order.end(), id) - order.begin());
    };
    // Round robin between the two: the mouse's frames leave 1st or 2nd and
    // 3rd or 4th after it arrived.
    EXPECT_LE(at(1000), before + 1);
    EXPECT_LE(at(1001), before + 3);
    EXPECT_GT(order.size(), before + 10); // the elephant kept sending
    free_all(take_fabric(a));
}

// Receive flows keep their identity through slot reuse: flows of three
// senders, 24 in all, interleaved packet by packet; then the table is full
// and pressure evicts idle flows, whose slots new flows reuse; then the
// first flows come back. Every frame is delivered once, in order, on its own
// flow: a lookup that named the wrong flow would show as duplicates, frames
// beyond the window, frames out of order or flows created twice. (Written
// for a receive-flow cache in front of rte_hash, which was measured and
// dropped: docs/pipeline.md "Burst work".)
TEST_F(flows, ReceiveFlowsKeepTheirIdentityThroughSlotReuse)
{
    auto bc = host_config("fl_reuse_b", 2, control.get());
    bc.algo.tables.flow_capacity = 32;
    bc.in_order = true;
    bc.flow_idle_ns = 1'000'000;
    pipeline::engine b(bc);
    std::vector<std::unique_ptr<pipeline::engine>> senders;
    for (std::uint8_t s = 0; s < 3; ++s) {
        auto c = config("fl_reuse_a" + std::to_string(s));
        c.outer.own_ip = 0x0a000010u + s; // three sender addresses
        c.algo.tables.flow_capacity = 64;
        senders.push_back(std::make_unique<pipeline::engine>(c));
    }
    std::map<std::uint32_t, std::uint32_t> next_id; // per (sender, port): the next id expected
    std::uint64_t delivered = 0;
    common::time_ns now = 1000;
    auto round = [&](std::uint16_t first_port, int from, int to) {
        for (int k = from; k < to; ++k) {
            std::vector<rte_mbuf*> data;
            for (std::size_t s = 0; s < senders.size(); ++s) {
                for (std::uint16_t port = first_port; port < first_port + 8; ++port) {
                    const std::uint32_t id = (static_cast<std::uint32_t>(s) << 24) | (std::uint32_t{port} << 8) |
                                             static_cast<std::uint32_t>(k);
                    rte_mbuf* m = to_mbuf(frames.get(), data_frame(id, 64, port));
                    ASSERT_EQ(senders[s]->from_host(&m, 1, now), 1);
                    for (rte_mbuf* d : take_fabric(*senders[s])) {
                        data.push_back(d);
                    }
                }
            }
            b.from_fabric(data.data(), static_cast<std::uint16_t>(data.size()), now + 500);
            for (rte_mbuf* h : take_host(b)) {
                const std::uint32_t id = frame_id(from_mbuf(h));
                const std::uint32_t flow = id >> 8;
                EXPECT_EQ(id & 0xff, next_id[flow]) << "flow " << flow;
                next_id[flow] = (id & 0xff) + 1;
                ++delivered;
                rte_pktmbuf_free(h);
            }
            auto acks = take_fabric(b);
            for (rte_mbuf* ack : acks) {
                const auto r = wire::parse(ack);
                ASSERT_TRUE(r.ok());
                senders[r.packet.dst_ip - 0x0a000010u]->from_fabric(&ack, 1, now + 1000);
            }
            now += 2000;
        }
    };
    round(100, 0, 20); // 24 flows, 20 frames each
    EXPECT_EQ(b.counters().receiver_flow_created, 24u);
    now += 2'000'000; // all idle now
    round(200, 0, 5);  // 24 new flows: 8 fit, 16 take the slots of idle ones
    EXPECT_EQ(b.counters().receiver_flow_created, 48u);
    EXPECT_GE(b.counters().receiver_flow_evicted_pressure, 16u);
    now += 2'000'000;
    // The first flows come back: b forgot them, their old slots hold other
    // flows, and they start again where their senders are.
    round(100, 20, 23);
    EXPECT_GT(b.counters().receiver_flow_created, 48u);
    EXPECT_EQ(delivered, 24u * 20 + 24u * 5 + 24u * 3);
    EXPECT_EQ(b.counters().data_drop_duplicate, 0u);
    EXPECT_EQ(b.counters().data_drop_beyond_window, 0u);
    EXPECT_EQ(b.counters().data_drop_flow_table_full, 0u);
    for (auto& s : senders) {
        EXPECT_EQ(s->counters().data_acked, 24u * 28 / 3);
    }
}

// Sender flows keep their identity through slot reuse: frames of 24 flows,
// interleaved, then idle eviction and 24 new flows in the freed slots, then
// the first ones again. Each flow's DATA must carry one flow_id and
// consecutive sequence numbers from 0: a lookup naming the wrong flow would
// put a frame on another flow's sequence.
TEST_F(flows, SendFlowsKeepTheirIdentityThroughSlotReuse)
{
    auto c = config("fl_sreuse");
    c.algo.tables.flow_capacity = 32;
    c.algo.retransmit.window_packets = 1024;
    c.flow_queue_packets = 64;
    pipeline::engine a(c);
    struct seen {
        std::uint32_t flow_id = 0;
        std::uint32_t next_seq = 0;
    };
    std::map<std::uint16_t, seen> by_port; // the current incarnation of each port's flow
    common::time_ns now = 1000;
    auto burst = [&](std::uint16_t first_port, int frames_per_flow) {
        for (int k = 0; k < frames_per_flow; ++k) {
            std::vector<rte_mbuf*> in;
            for (std::uint16_t port = first_port; port < first_port + 24; ++port) {
                in.push_back(to_mbuf(frames.get(), data_frame(port, 64, port)));
            }
            ASSERT_EQ(a.from_host(in.data(), static_cast<std::uint16_t>(in.size()), now), in.size());
            for (rte_mbuf* m : take_fabric(a)) {
                const auto r = wire::parse(m);
                ASSERT_TRUE(r.ok());
                if (r.packet.header.type != wire::packet_type::data) {
                    rte_pktmbuf_free(m); // a probe
                    continue;
                }
                const bytes packet = from_mbuf(m);
                const auto port = static_cast<std::uint16_t>(
                    frame_id(bytes(packet.begin() + r.packet.inner_offset, packet.end())));
                seen& s = by_port[port];
                if (r.packet.header.seq == 0) {
                    s = seen{r.packet.header.flow_id, 0}; // a new incarnation
                }
                EXPECT_EQ(r.packet.header.flow_id, s.flow_id) << "port " << port;
                EXPECT_EQ(r.packet.header.seq, s.next_seq) << "port " << port;
                s.next_seq = r.packet.header.seq + 1;
                rte_pktmbuf_free(m);
            }
            now += 1000;
        }
    };
    auto idle_out = [&] {
        a.release_all(); // the frames in flight go: the flows are idle
        for (common::time_ns t = now + 2'000'000; a.active_flows() > 0 && t < now + 4'000'000; t += 10'000) {
            a.poll(t);
        }
        EXPECT_EQ(a.active_flows(), 0u);
        now += 5'000'000;
    };
    burst(100, 10);
    EXPECT_EQ(a.counters().flow_created, 24u);
    idle_out();
    burst(200, 5); // new flows in the freed slots
    idle_out();
    burst(100, 5); // the first ports again: new incarnations
    EXPECT_EQ(a.counters().flow_created, 72u);
    EXPECT_EQ(a.counters().host_drop_flow_table_full, 0u);
    a.release_all();
}
