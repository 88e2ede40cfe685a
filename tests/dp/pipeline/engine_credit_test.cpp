// Receiver-paced credits (congestion.cc credit; docs/congestion.md
// "Receiver-paced credits"): engines on real mbufs through a delay line on
// a fake clock. A receiver splits its downlink equally between a sender
// with one path and a sender with eight; a lost CREDIT costs nothing once
// the next arrives (each carries the count granted so far); a sender whose
// receiver grants nothing goes on at its rate after fallback_us; a forged
// CREDIT changes nothing.
#include "harness.hpp"

#include "wire/header_writer.hpp"
#include "wire/mbuf_build.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <functional>

using namespace laps;
using namespace laps::test;

namespace {

constexpr common::time_ns us = 1000;
constexpr std::uint32_t receiver_ip = 0x0a000002;

// Host `host` sending to 10.0.0.2 under cc credit over `paths` paths (pids
// first_pid.., 2 us each way), probing off, line rate 100 Gb/s.
pipeline::engine_config credit_sender(const std::string& name, std::uint8_t host, rte_mempool* control,
                                      tables::path_id first_pid, std::uint32_t paths)
{
    auto c = host_config(name, host, control);
    std::vector<tables::path_id> pids;
    for (std::uint32_t i = 0; i < paths; ++i) {
        const auto pid = static_cast<tables::path_id>(first_pid + i);
        c.algo.paths.pit.push_back(path_row(pid, 4 * us, {0x0a0a0000u + pid}));
        pids.push_back(pid);
    }
    c.algo.paths.pst = {{tables::address::ipv4(receiver_ip), pids}};
    c.algo.selection.probing = false;
    c.algo.congestion.aimd.variant = congestion::cc_variant::credit;
    c.algo.congestion.aimd.cap_bps = 100e9;
    c.algo.retransmit.window_packets = 256;
    c.flow_queue_packets = 64;
    c.epoch = 0x1000u + host;
    return c;
}

// Host 2, pacing its credits for a 10 Gb/s downlink.
pipeline::engine_config credit_receiver(const std::string& name, rte_mempool* control)
{
    auto c = host_config(name, 2, control);
    c.algo.tables.flow_capacity = 256;
    c.algo.congestion.aimd.variant = congestion::cc_variant::credit;
    c.algo.congestion.aimd.credit.downlink_bps = 10e9;
    return c;
}

// Senders (hosts 1 and 3) and the receiver (host 2) through a delay line:
// 2 us each way on every pid, no serialisation (the receiver's credits are
// what paces the DATA). `drop` sees every packet the receiver sends.
struct credit_fabric {
    credit_fabric(rte_mempool* frame_pool, delay_line wire, std::map<std::uint8_t, pipeline::engine*> by_host,
                  pipeline::engine* rx)
        : frames(frame_pool), line(std::move(wire)), senders(std::move(by_host)), receiver(rx)
    {
    }

    rte_mempool* frames;
    delay_line line;
    std::map<std::uint8_t, pipeline::engine*> senders; // by host
    pipeline::engine* receiver;
    std::function<bool(const wire::parsed_packet&)> drop_to_sender;
    std::function<bool(const wire::parsed_packet&)> drop_to_receiver;
    std::map<std::uint8_t, std::uint64_t> delivered; // frames at the receiver's host, by sending host
    std::map<std::uint8_t, std::uint32_t> next_id;
    std::uint64_t dropped_to_sender = 0;
    common::time_ns now = 0;

    // Keeps each sender's flow offered frames until `total` per sender.
    void step(std::uint32_t total)
    {
        for (auto& [host, e] : senders) {
            while (next_id[host] < total) {
                rte_mbuf* m = to_mbuf(frames, data_frame(std::uint32_t{host} << 24 | next_id[host], 1000));
                if (e->from_host(&m, 1, now) == 0) {
                    rte_pktmbuf_free(m);
                    break;
                }
                ++next_id[host];
            }
        }
        auto to_receiver = line.arrivals(2, now);
        receiver->from_fabric(to_receiver.data(), static_cast<std::uint16_t>(to_receiver.size()), now);
        for (auto& [host, e] : senders) {
            auto in = line.arrivals(host, now);
            e->from_fabric(in.data(), static_cast<std::uint16_t>(in.size()), now);
            e->poll(now);
            for (auto* m : take_fabric(*e)) {
                const auto r = wire::parse(m);
                ASSERT_TRUE(r.ok());
                if (drop_to_receiver && drop_to_receiver(r.packet)) {
                    rte_pktmbuf_free(m);
                    continue;
                }
                line.send(m, 2, now);
            }
        }
        receiver->poll(now);
        for (auto* m : take_fabric(*receiver)) {
            const auto r = wire::parse(m);
            ASSERT_TRUE(r.ok());
            if (drop_to_sender && drop_to_sender(r.packet)) {
                ++dropped_to_sender;
                rte_pktmbuf_free(m);
                continue;
            }
            line.send(m, static_cast<int>(r.packet.dst_ip & 0xff), now);
        }
        for (auto* m : take_host(*receiver)) {
            ++delivered[static_cast<std::uint8_t>(frame_id(from_mbuf(m)) >> 24)];
            rte_pktmbuf_free(m);
        }
        now += 100;
    }

    // Until the receiver's host has `total` frames from host 1 (or 5 ms),
    // then 300 us more: the credits still owed, and those on the way.
    void run_to_end(std::uint32_t total)
    {
        while (delivered[1] < total && now < 5000 * us) {
            step(total);
        }
        for (const common::time_ns end = now + 300 * us; now < end;) {
            step(total);
        }
    }

    void drain()
    {
        for (auto& [host, e] : senders) {
            e->release_all();
            free_all(take_fabric(*e));
        }
        receiver->release_all();
        free_all(take_fabric(*receiver));
        free_all(take_host(*receiver));
        line.clear();
    }
};

struct credits : ::testing::Test {
    pool_ptr frames = make_pool("cr_frames", 16384);
    pool_ptr control = make_pool("cr_control", 16384, wire::header_mbuf_data_room);
    pool_ptr wire_pool = make_pool("cr_wire", 16384);

    std::map<tables::path_id, delay_line::path> two_us_paths() const
    {
        std::map<tables::path_id, delay_line::path> paths;
        for (tables::path_id pid = 0; pid < 32; ++pid) {
            paths[pid] = {2 * us, 0};
        }
        return paths;
    }

    void TearDown() override
    {
        EXPECT_EQ(in_use(frames.get()), 0u) << "host frames leaked";
        EXPECT_EQ(in_use(control.get()), 0u) << "header/control mbufs leaked";
        EXPECT_EQ(in_use(wire_pool.get()), 0u) << "wire copies leaked";
    }
};

} // namespace

// The receiver's turns go to the flow granted least so far: a sender with
// one path and a sender with eight, both able to fill the 10 Gb/s downlink
// ten times over, each get half of it once their unscheduled bytes are out.
TEST_F(credits, OnePathAndEightPathSendersShareTheDownlinkEqually)
{
    pipeline::engine one(credit_sender("cr_one", 1, control.get(), 20, 1));
    pipeline::engine eight(credit_sender("cr_eight", 3, control.get(), 0, 8));
    pipeline::engine b(credit_receiver("cr_rx", control.get()));
    credit_fabric fabric(frames.get(), delay_line(wire_pool.get(), two_us_paths()), {{1, &one}, {3, &eight}}, &b);
    while (fabric.now < 200 * us) { // the unscheduled bytes are long delivered
        fabric.step(1'000'000);
    }
    const auto before = fabric.delivered;
    while (fabric.now < 2000 * us) {
        fabric.step(1'000'000);
    }
    const double from_one = static_cast<double>(fabric.delivered[1] - before.at(1));
    const double from_eight = static_cast<double>(fabric.delivered[3] - before.at(3));
    std::printf("1.8 ms: one path %.0f frames, eight paths %.0f\n", from_one, from_eight);
    // 10 Gb/s x 0.98 of ~1,090-byte DATA: ~2,000 frames in 1.8 ms together.
    EXPECT_GT(from_one + from_eight, 1900.0);
    EXPECT_LT(from_one + from_eight, 2100.0);
    EXPECT_NEAR(from_one / (from_one + from_eight), 0.5, 0.03);
    for (const auto* e : {&one, &eight}) {
        EXPECT_GT(e->counters().credit_taken, 900u);
        EXPECT_EQ(e->counters().credit_fallback, 0u);
        EXPECT_EQ(e->counters().credit_drop_beyond_request, 0u);
    }
    EXPECT_GE(eight.packets_per_path()[7], 1u); // the eight-path sender sprays
    fabric.drain();
}

// A CREDIT carries the count granted so far: with the 5th and 6th CREDIT to
// the sender lost, the 7th grants all three, and the sender never waits
// long enough to fall back.
TEST_F(credits, LostCreditIsMadeGoodByTheNext)
{
    pipeline::engine a(credit_sender("cr_loss_a", 1, control.get(), 20, 1));
    pipeline::engine b(credit_receiver("cr_loss_rx", control.get()));
    credit_fabric fabric(frames.get(), delay_line(wire_pool.get(), two_us_paths()), {{1, &a}}, &b);
    fabric.drop_to_sender = [](const wire::parsed_packet& p) {
        return p.header.type == wire::packet_type::credit && (p.header.seq == 5 || p.header.seq == 6);
    };
    const std::uint32_t total = 400;
    fabric.run_to_end(total);
    EXPECT_EQ(fabric.delivered[1], total);
    EXPECT_EQ(fabric.dropped_to_sender, 2u);
    const auto& s = a.counters();
    EXPECT_EQ(s.credit_rx, b.counters().credit_sent - 2);
    EXPECT_EQ(s.credit_fallback, 0u);
    EXPECT_EQ(s.credit_drop_beyond_request, 0u);
    // The receiver granted a credit for every sequence number asked for (all
    // but the last DATA's: nothing was behind it) and the window past the
    // unscheduled bytes to the first request (1,116-byte DATA: 73 credits).
    EXPECT_EQ(congestion::credit_window_grants(congestion::credit_params{}, 1116), 73u);
    EXPECT_EQ(b.counters().credit_sent, (total - 1) + 73);
    EXPECT_GT(s.credit_taken, 300u);
    fabric.drain();
}

// A first transmission's PULL asks for every sequence number up to it: the
// requests of DATA lost on the way (first transmissions of seq 100-109, all
// with PULL) come with the next DATA that arrives, and each resend asks for
// the credit it spent, so the flow never has to fall back.
TEST_F(credits, LostDataRequestComesWithTheNext)
{
    pipeline::engine a(credit_sender("cr_ldata_a", 1, control.get(), 20, 1));
    pipeline::engine b(credit_receiver("cr_ldata_rx", control.get()));
    credit_fabric fabric(frames.get(), delay_line(wire_pool.get(), two_us_paths()), {{1, &a}}, &b);
    fabric.drop_to_receiver = [](const wire::parsed_packet& p) {
        return p.header.type == wire::packet_type::data && !p.header.has_flag(wire::flag_retransmit) &&
               p.header.seq >= 100 && p.header.seq < 110;
    };
    const std::uint32_t total = 400;
    fabric.run_to_end(total);
    EXPECT_EQ(fabric.delivered[1], total);
    EXPECT_EQ(a.counters().data_resent, 10u);
    EXPECT_EQ(a.counters().credit_fallback, 0u);
    EXPECT_EQ(b.counters().credit_sent, (total - 1) + 73 + 10);
    fabric.drain();
}

// A flow's credits run at most its window ahead of its DATA that arrived
// (docs/congestion.md "Receiver-paced credits", item 9): while seq 100-149
// are held up on the way (every copy lost for the first 300 us), the DATA
// after them still ask for credits up to their sequence numbers, but the
// receiver grants only the window past what arrived and counts the turns it
// passed over; once the resends arrive it grants the rest and the flow
// completes.
TEST_F(credits, CreditsStayAWindowAheadOfTheDataThatArrived)
{
    pipeline::engine a(credit_sender("cr_ahead_a", 1, control.get(), 20, 1));
    pipeline::engine b(credit_receiver("cr_ahead_rx", control.get()));
    credit_fabric fabric(frames.get(), delay_line(wire_pool.get(), two_us_paths()), {{1, &a}}, &b);
    fabric.drop_to_receiver = [&fabric](const wire::parsed_packet& p) {
        return p.header.type == wire::packet_type::data && p.header.seq >= 100 && p.header.seq < 150 &&
               fabric.now < 300 * us;
    };
    const std::uint32_t total = 400;
    while (fabric.now < 250 * us) {
        fabric.step(total);
    }
    const auto& r = b.counters();
    // Granted: the window's 73 past what arrived, not up to what was asked.
    EXPECT_GT(r.data_rx, 100u);
    EXPECT_EQ(r.credit_sent, r.data_rx + 73u);
    // DATA past seq 150 arrived, each asking for every sequence number up to
    // its own: at least 151 + 73 asked for.
    EXPECT_LT(r.credit_sent, 151u + 73u);
    EXPECT_GT(r.credit_held, 0u);
    const std::uint64_t granted_while_lost = r.credit_sent;
    fabric.run_to_end(total);
    EXPECT_EQ(fabric.delivered[1], total);
    EXPECT_GT(r.credit_sent, granted_while_lost + 200u); // granted again: the rest of the 400 DATA
    EXPECT_EQ(a.counters().credit_drop_beyond_request, 0u);
    fabric.drain();
}

// A receiver whose credits never arrive: the sender sends its unscheduled
// bytes, waits fallback_us (100) for a credit, then goes on at its rate.
TEST_F(credits, SenderWithoutCreditsFallsBackAfterTheWait)
{
    pipeline::engine a(credit_sender("cr_fb_a", 1, control.get(), 20, 1));
    pipeline::engine b(credit_receiver("cr_fb_rx", control.get()));
    credit_fabric fabric(frames.get(), delay_line(wire_pool.get(), two_us_paths()), {{1, &a}}, &b);
    fabric.drop_to_sender = [](const wire::parsed_packet& p) { return p.header.type == wire::packet_type::credit; };
    const std::uint32_t total = 400;
    while (fabric.now < 95 * us) {
        fabric.step(total);
    }
    // 32 KB unscheduled: the 32 frames whose DATA left before it ran out.
    EXPECT_EQ(fabric.delivered[1], 32u);
    EXPECT_EQ(a.counters().credit_wait, 1u);
    EXPECT_EQ(a.counters().credit_fallback, 0u);
    while (fabric.now < 115 * us) {
        fabric.step(total);
    }
    EXPECT_EQ(a.counters().credit_fallback, 1u);
    EXPECT_GT(fabric.delivered[1], 32u);
    while (fabric.delivered[1] < total && fabric.now < 5000 * us) {
        fabric.step(total);
    }
    EXPECT_EQ(fabric.delivered[1], total);
    EXPECT_EQ(a.counters().credit_rx, 0u);
    fabric.drain();
}

// CREDITs that are not the receiver's count for a live flow of this sender
// are counted and change nothing: another epoch, another flow, a pid of
// another set, a grant beyond what the flow asked for.
TEST_F(credits, ForgedCreditChangesNothing)
{
    pipeline::engine a(credit_sender("cr_forge_a", 1, control.get(), 20, 1));
    // Take the sender's first DATA for a route to forge from.
    rte_mbuf* frame = to_mbuf(frames.get(), data_frame(1));
    ASSERT_EQ(a.from_host(&frame, 1, 0), 1u);
    auto out = take_fabric(a);
    ASSERT_EQ(out.size(), 1u);
    const auto data = wire::parse(from_mbuf(out[0]));
    free_all(out);
    ASSERT_TRUE(data.ok());
    EXPECT_TRUE(data.packet.header.has_flag(wire::flag_pull) == false); // nothing more to send yet

    wire::outer_config receiver_side;
    receiver_side.own_ip = receiver_ip;
    const wire::header_writer writer(receiver_side);
    const auto forge = [&](auto&& change) {
        wire::credit_route route = wire::credit_route_of(data.packet);
        std::uint32_t granted = 1;
        change(route, granted);
        bytes packet(writer.credit_size(route.anchor_count));
        writer.credit(packet.data(), route, granted);
        feed(frames.get(), a, packet, 10 * us);
    };
    forge([](wire::credit_route& r, std::uint32_t&) { r.epoch ^= 1; });
    forge([](wire::credit_route& r, std::uint32_t&) { r.flow_id ^= 1; });
    forge([](wire::credit_route& r, std::uint32_t&) { r.pid = 200; }); // no PIT row
    forge([](wire::credit_route&, std::uint32_t& granted) { granted = 1000; });
    const auto& s = a.counters();
    EXPECT_EQ(s.credit_rx, 4u);
    EXPECT_EQ(s.credit_drop_stale_epoch, 1u);
    EXPECT_EQ(s.credit_drop_unknown_flow, 1u);
    EXPECT_EQ(s.credit_drop_unknown_pid, 1u);
    EXPECT_EQ(s.credit_drop_beyond_request, 1u);
    EXPECT_EQ(s.credit_taken, 0u);
    a.release_all();
    free_all(take_fabric(a));
}

// Packets other than DATA that come in through a port whose credits are owed
// (probes, answers, credits) take that port's time, and its credits leave it
// to them (docs/congestion.md "Receiver-paced credits", item 3): one of
// 74 bytes every microsecond takes 6% of the turns of a 10 Gb/s port paced
// at 0.98, and the credits it grants over 800 us fall by as much.
TEST_F(credits, OtherArrivalsAtABusyPortPutItsCreditsBack)
{
    const auto credits_granted = [&](bool other_arrivals) {
        pipeline::engine a(credit_sender("cr_chg_a", 1, control.get(), 20, 1));
        pipeline::engine b(credit_receiver("cr_chg_rx", control.get()));
        credit_fabric fabric(frames.get(), delay_line(wire_pool.get(), two_us_paths()), {{1, &a}}, &b);
        wire::outer_config other_host;
        other_host.own_ip = 0x0a000009;
        const wire::header_writer writer(other_host);
        wire::credit_route route;
        route.dst_ip = receiver_ip;
        route.pid = 3;
        route.anchor_count = 1;
        bytes packet(writer.credit_size(route.anchor_count));
        writer.credit(packet.data(), route, 1);
        while (fabric.now < 200 * us) {
            fabric.step(1'000'000);
        }
        const std::uint64_t before = b.counters().credit_sent;
        std::uint32_t fed = 0;
        while (fabric.now < 1000 * us) {
            if (other_arrivals && fabric.now % (1 * us) == 0) {
                feed(frames.get(), b, packet, fabric.now);
                ++fed;
            }
            fabric.step(1'000'000);
        }
        EXPECT_EQ(b.counters().credit_port_charged, fed);
        const std::uint64_t granted = b.counters().credit_sent - before;
        std::printf("%s: %zu-byte packets, %u charged, %lu credits in 800 us\n",
                    other_arrivals ? "with other arrivals" : "DATA alone", packet.size(), fed,
                    static_cast<unsigned long>(granted));
        fabric.drain();
        return std::pair{static_cast<double>(granted), packet.size()};
    };
    const auto [alone, size] = credits_granted(false);
    const auto [shared, unused] = credits_granted(true);
    // Each 1 us: `size` bytes of the 1,225 the port's credits call (0.98 x
    // 10 Gb/s) are taken.
    const double taken = static_cast<double>(size) / 1225.0;
    EXPECT_NEAR(shared / alone, 1.0 - taken, 0.01);
}

// Under cc credit a flow sends where its credits point, so the other paths'
// losses are found by their timeouts one by one. Each path backs off on its
// own (send_side::backoff_of): the losses of the last unscheduled DATA (one
// per path) time out on six paths, and none of those timeouts doubles
// another path's next one (with one count for the flow, one did: a path
// armed after it waits twice as long, and in the testbed's in-casts eight
// paths' timeouts stretched a ninth's to milliseconds).
TEST_F(credits, EachPathBacksOffOnItsOwn)
{
    pipeline::engine a(credit_sender("cr_bo_a", 1, control.get(), 0, 8));
    pipeline::engine b(credit_receiver("cr_bo_rx", control.get()));
    credit_fabric fabric(frames.get(), delay_line(wire_pool.get(), two_us_paths()), {{1, &a}}, &b);
    fabric.drop_to_receiver = [](const wire::parsed_packet& p) {
        return p.header.type == wire::packet_type::data && !p.header.has_flag(wire::flag_retransmit) &&
               p.header.seq >= 24 && p.header.seq < 32;
    };
    const std::uint32_t total = 400;
    while (fabric.delivered[1] < total && fabric.now < 5000 * us) {
        fabric.step(total);
    }
    const common::time_ns done = fabric.now;
    fabric.run_to_end(total);
    EXPECT_EQ(fabric.delivered[1], total);
    const auto& s = a.counters();
    std::printf("resent %lu, by timeout %lu, backoffs %lu, all delivered at %.0f us\n",
                static_cast<unsigned long>(s.data_resent), static_cast<unsigned long>(s.loss_by_timeout),
                static_cast<unsigned long>(s.timeout_backoff), static_cast<double>(done) / us);
    // 400 DATA of ~1,116 bytes at 0.98 x 10 Gb/s take ~365 us.
    EXPECT_LT(done, 500 * us);
    EXPECT_EQ(s.data_resent, 8u);
    EXPECT_GE(s.loss_by_timeout, 4u);
    EXPECT_EQ(s.timeout_backoff, 0u);
    fabric.drain();
}
