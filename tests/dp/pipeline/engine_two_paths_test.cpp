// Two engines back to back through a two-path delay line on a fake clock
// (paper §III-E..G end to end): the faster path carries more packets but not
// all; packets dropped on purpose are exactly the ones resent; every byte
// reaches the receiving host once, in order when the reorder buffer is on;
// every mbuf is back in its pool at the end.
#include "harness.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>

using namespace laps;
using namespace laps::test;

namespace {

constexpr common::time_ns us = 1000;

struct run_result {
    std::map<tables::path_id, std::uint64_t> per_path; // DATA packets the sender put on each
    std::uint64_t dropped = 0;
    std::uint64_t delivered = 0;
    std::uint64_t duplicates_at_host = 0;
    std::uint64_t out_of_order_at_host = 0;
    std::set<std::uint32_t> ids;
    pipeline::engine_counters sender;
    pipeline::engine_counters receiver;
    common::time_ns finished_at = 0;
};

struct two_paths : ::testing::Test {
    pool_ptr frames = make_pool("tp_frames", 16384);
    pool_ptr control = make_pool("tp_control", 16384, wire::header_mbuf_data_room);
    pool_ptr wire_pool = make_pool("tp_wire", 16384);

    void TearDown() override
    {
        EXPECT_EQ(in_use(frames.get()), 0u) << "host frames leaked";
        EXPECT_EQ(in_use(control.get()), 0u) << "header/control mbufs leaked";
        EXPECT_EQ(in_use(wire_pool.get()), 0u) << "wire copies leaked";
    }

    // 4 flows x `per_flow` frames of 1000 bytes from A to B.
    run_result run(const std::string& name, bool in_order, std::uint32_t per_flow,
                   std::function<bool(const wire::laps_header&)> drop = {})
    {
        auto ac = host_config(name + "_a", 1, control.get());
        ac.algo.paths.pit = {path_row(0, 12 * us, {100}), path_row(1, 22 * us, {200})};
        ac.algo.paths.pit[0].uncongested_ns = 10 * us;
        ac.algo.paths.pit[1].uncongested_ns = 20 * us;
        ac.algo.paths.pst = {{tables::address::ipv4(0x0a000002), {0, 1}}};
        // The sender's line rate fits the two paths (10 + 10 Gb/s): queues stay
        // short, so every resend is a real loss. Congestion is the testbed's job.
        ac.algo.congestion.aimd.cap_bps = 10e9;
        auto bc = host_config(name + "_b", 2, control.get());
        bc.in_order = in_order;
        run_result r;
        {
            pipeline::engine a(ac);
            pipeline::engine b(bc);
            // Path 0: 10 us, path 1: 20 us, both 10 Gb/s.
            delay_line line(wire_pool.get(), {{0, {10 * us, 10e9}}, {1, {20 * us, 10e9}}});
            line.drop_data = std::move(drop);

            std::deque<rte_mbuf*> offered;
            constexpr int flows = 4;
            for (std::uint32_t i = 0; i < per_flow; ++i) {
                for (int f = 0; f < flows; ++f) {
                    offered.push_back(
                        to_mbuf(frames.get(), data_frame(static_cast<std::uint32_t>(f) << 24 | i, 1000,
                                                         static_cast<std::uint16_t>(1000 + f))));
                }
            }
            const std::uint64_t total = offered.size();
            std::map<int, std::uint32_t> next_in_flow;
            common::time_ns now = 0;
            const common::time_ns step = 200;
            while (r.delivered < total && now < 200'000 * us) {
                while (!offered.empty()) {
                    rte_mbuf* m = offered.front();
                    if (a.from_host(&m, 1, now) == 0) {
                        break;
                    }
                    offered.pop_front();
                }
                auto to_b = line.arrivals(2, now);
                b.from_fabric(to_b.data(), static_cast<std::uint16_t>(to_b.size()), now);
                auto to_a = line.arrivals(1, now);
                a.from_fabric(to_a.data(), static_cast<std::uint16_t>(to_a.size()), now);
                a.poll(now);
                b.poll(now);
                for (auto* m : take_fabric(a)) {
                    line.send(m, 2, now);
                }
                for (auto* m : take_fabric(b)) {
                    line.send(m, 1, now);
                }
                for (auto* m : take_host(b)) {
                    const std::uint32_t id = frame_id(from_mbuf(m));
                    if (!r.ids.insert(id).second) {
                        ++r.duplicates_at_host;
                    }
                    const int flow = static_cast<int>(id >> 24);
                    const std::uint32_t index = id & 0xffffff;
                    if (index != next_in_flow[flow]) {
                        ++r.out_of_order_at_host;
                    }
                    next_in_flow[flow] = std::max(next_in_flow[flow], index + 1);
                    ++r.delivered;
                    rte_pktmbuf_free(m);
                }
                now += step;
            }
            // Let the last ACKs come home so A releases everything.
            for (int i = 0; i < 2000 && !line.empty(); ++i, now += step) {
                auto to_a = line.arrivals(1, now);
                a.from_fabric(to_a.data(), static_cast<std::uint16_t>(to_a.size()), now);
                for (auto* m : take_fabric(a)) {
                    line.send(m, 2, now);
                }
                auto to_b = line.arrivals(2, now);
                b.from_fabric(to_b.data(), static_cast<std::uint16_t>(to_b.size()), now);
                for (auto* m : take_fabric(b)) {
                    line.send(m, 1, now);
                }
                free_all(take_host(b));
            }
            r.finished_at = now;
            r.per_path = {{0, a.packets_per_path()[0]}, {1, a.packets_per_path()[1]}};
            r.dropped = line.dropped;
            r.sender = a.counters();
            r.receiver = b.counters();
            EXPECT_EQ(line.copy_failures, 0u);
            for (auto* m : offered) {
                rte_pktmbuf_free(m);
            }
            line.clear();
        }
        return r;
    }
};

std::uint64_t data_on(const run_result& r, tables::path_id pid)
{
    const auto it = r.per_path.find(pid);
    return it == r.per_path.end() ? 0 : it->second;
}

} // namespace

// Eq. 1 with normalised beta: the 10 us path gets more packets, the 20 us
// path still gets some (§IV-B, Fig. 19: "shorter paths carry more, not all").
TEST_F(two_paths, FasterPathCarriesMoreButNotAll)
{
    const auto r = run("tp_share", false, 1500);
    EXPECT_EQ(r.delivered, 6000u);
    EXPECT_EQ(r.ids.size(), 6000u);
    const double fast = static_cast<double>(data_on(r, 0));
    const double slow = static_cast<double>(data_on(r, 1));
    std::printf("packets on the 10 us path: %.0f, on the 20 us path: %.0f (%.1f%% slow); done at %.1f us\n", fast,
                slow, 100 * slow / (fast + slow), static_cast<double>(r.finished_at) / us);
    EXPECT_GT(fast, slow);
    EXPECT_GT(slow / (fast + slow), 0.05) << "the slower path must still carry traffic";
    EXPECT_LT(slow / (fast + slow), 0.5);
    EXPECT_EQ(r.sender.data_resent, 0u);
    EXPECT_EQ(r.receiver.data_drop_duplicate, 0u);
}

// §III-G: drop every 97th first transmission. Exactly those are resent; the
// host receives every frame once, in order with the reorder buffer on.
TEST_F(two_paths, DroppedPacketsAreExactlyTheOnesResentAndAllArriveOnceInOrder)
{
    std::uint64_t seen = 0;
    const auto r = run("tp_loss", true, 1500, [&](const wire::laps_header& h) {
        if (h.has_flag(wire::flag_retransmit)) {
            return false;
        }
        return ++seen % 97 == 0;
    });
    EXPECT_GT(r.dropped, 50u);
    EXPECT_EQ(r.delivered, 6000u);
    EXPECT_EQ(r.ids.size(), 6000u);
    EXPECT_EQ(r.duplicates_at_host, 0u);
    EXPECT_EQ(r.out_of_order_at_host, 0u);
    EXPECT_EQ(r.sender.data_resent, r.dropped);
    EXPECT_EQ(r.sender.loss_by_gap + r.sender.loss_by_timeout, r.dropped);
    EXPECT_EQ(r.sender.loss_spurious, 0u);
    EXPECT_EQ(r.receiver.data_drop_duplicate, 0u);
    EXPECT_GT(r.receiver.reorder_held_max, 0u);
}

// Without the reorder buffer, frames may arrive out of order but still once.
TEST_F(two_paths, WithoutReorderingEveryFrameStillArrivesExactlyOnce)
{
    std::uint64_t seen = 0;
    const auto r = run("tp_unordered", false, 1000, [&](const wire::laps_header& h) {
        return !h.has_flag(wire::flag_retransmit) && ++seen % 50 == 0;
    });
    EXPECT_EQ(r.delivered, 4000u);
    EXPECT_EQ(r.ids.size(), 4000u);
    EXPECT_EQ(r.duplicates_at_host, 0u);
    EXPECT_EQ(r.sender.data_resent, r.dropped);
    EXPECT_GT(r.out_of_order_at_host, 0u); // spraying over 10 and 20 us paths reorders
}
