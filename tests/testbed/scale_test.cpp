// The testbed at AI-fabric scale (docs/testbed.md, "Memory and scale"):
// tables per pair that talks, engines only on hosts with flows, sized to
// them, and a scenario that cannot fit refused up front with its numbers.
#include "fabric/eal.hpp"
#include "fabric/frames.hpp"
#include "fabric/huge_pages.hpp"
#include "helpers.hpp"

#include <rte_memory.h>
#include <rte_memzone.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <set>

using namespace laps;
using namespace laps::test;

namespace {

std::string permutation(const std::string& topology, const std::string& hosts, std::uint32_t bytes)
{
    return "version: 1\n"
           "topology: '" +
           topology +
           "'\n"
           "traffic:\n"
           "  - llm: {pattern: permutation, message_bytes: " +
           std::to_string(bytes) + (hosts.empty() ? "" : ", hosts: [" + hosts + "]") + "}\n";
}

} // namespace

TEST(testbed_scale, PermutationSendsAndReceivesOnceEach)
{
    const auto s = scenario_from(permutation("fat_tree:k=4", "", 4096));
    fabric::simulation sim(s);
    std::multiset<topology::node_id> senders;
    std::multiset<topology::node_id> receivers;
    for (const auto& f : sim.flows()) {
        EXPECT_NE(f.spec.src, f.spec.dst);
        senders.insert(f.spec.src);
        receivers.insert(f.spec.dst);
    }
    EXPECT_EQ(sim.flows().size(), 16u);
    for (topology::node_id h = 0; h < 16; ++h) {
        EXPECT_EQ(senders.count(h), 1u) << "host " << h;
        EXPECT_EQ(receivers.count(h), 1u) << "host " << h;
    }
    sim.run();
    EXPECT_EQ(sim.completed_flows(), 16u);
    expect_no_leak(sim);
}

TEST(testbed_scale, TablesAndEnginesFollowTheTraffic)
{
    // 16 of a fat tree's 128 hosts talk: they alone get PST rows (one each,
    // their one destination) and engines with one flow slot per side.
    const auto s = scenario_from(permutation("fat_tree:k=8", "0, 9, 18, 27, 36, 45, 54, 63, 72, 81, 90, 99, 108, 117, 126, 127", 65536));
    fabric::simulation sim(s);
    const auto* engines = sim.laps_hosts();
    ASSERT_NE(engines, nullptr);
    std::set<topology::node_id> talking;
    for (const auto& f : sim.flows()) {
        talking.insert(f.spec.src);
        talking.insert(f.spec.dst);
    }
    ASSERT_EQ(talking.size(), 16u);
    for (const auto& h : sim.hosts()) {
        const bool talks = talking.count(h.id) != 0;
        EXPECT_EQ(h.table.pst.size(), talks ? 1u : 0u) << "host " << h.id;
        EXPECT_EQ(engines->has_engine(h.id), talks) << "host " << h.id;
        if (talks) {
            EXPECT_EQ(engines->engine(h.id).config().algo.tables.flow_capacity, 1u);
            EXPECT_EQ(engines->engine(h.id).config().receive_flow_capacity, 1u);
        } else {
            EXPECT_THROW(engines->engine(h.id), std::logic_error);
            EXPECT_TRUE(engines->packets_per_path(h.id).empty());
        }
    }
    sim.run();
    EXPECT_EQ(sim.completed_flows(), 16u);
    const auto summary = fabric::summarize(sim);
    EXPECT_EQ(summary.engines.data_delivered, 16u * ((65536u + 981u) / 982u)); // 982 payload bytes a frame
    expect_no_leak(sim);
}

TEST(testbed_scale, MoreEnginesThanMemzonesShareTheirTables)
{
    // k = 18: 1,458 hosts, each with a flow. Were each engine's PST an
    // rte_hash of its own (two memzones), they would need more than
    // RTE_MAX_MEMZONE (2,560); their rows share one table (flow_index), so
    // the engines take no memzone each and the run completes.
    static_assert(RTE_MAX_MEMZONE < 2 * 1458, "the fabric must be too large for a PST of its own per engine");
    const auto memzones = [] {
        unsigned n = 0;
        rte_memzone_walk([](const rte_memzone*, void* count) { ++*static_cast<unsigned*>(count); }, &n);
        return n;
    };
    const unsigned before = memzones();
    const auto s = scenario_from(permutation("fat_tree:k=18", "", 1024));
    fabric::simulation sim(s);
    ASSERT_NE(sim.laps_hosts(), nullptr);
    EXPECT_TRUE(sim.laps_hosts()->has_engine(1457));
    // The run's own: three mbuf pools and three shared tables, a few each.
    EXPECT_LT(memzones() - before, 32u);
    sim.run();
    EXPECT_EQ(sim.completed_flows(), 1458u);
    expect_no_leak(sim);
}

TEST(testbed_scale, PoolsTakeMemoryAsTheyAreUsed)
{
    // A pool of 100,000 mbufs starts with one chunk and grows by chunks when
    // fewer than the reserve are free; mbufs of a later chunk are whole
    // mbufs of the pool (rte_pktmbuf_init ran on them).
    auto pool = fabric::make_mbuf_pool("scale_growing", 100'000, RTE_MBUF_DEFAULT_BUF_SIZE);
    ASSERT_EQ(pool->populated_size, fabric::pool_chunk);
    fabric::mbuf_pools pools;
    pools.frames = std::move(pool);
    pools.wire = fabric::make_mbuf_pool("scale_wire", 1024, 256);
    pools.control = fabric::make_mbuf_pool("scale_ctl", 1024, 256);
    std::vector<rte_mbuf*> taken;
    for (std::uint32_t i = 0; i < 40'000; ++i) {
        pools.keep_ready();
        rte_mbuf* m = rte_pktmbuf_alloc(pools.frames.get());
        ASSERT_NE(m, nullptr) << "after " << i;
        ASSERT_EQ(m->pool, pools.frames.get());
        ASSERT_EQ(m->buf_len, RTE_MBUF_DEFAULT_BUF_SIZE);
        ASSERT_NE(rte_pktmbuf_append(m, 1500), nullptr);
        taken.push_back(m);
    }
    // 40,000 taken with 16,384 kept free: two chunks, not the whole pool.
    EXPECT_EQ(pools.frames->populated_size, 2 * fabric::pool_chunk);
    EXPECT_EQ(fabric::mbufs_in_use(pools.frames.get()), 40'000u);
    for (auto* m : taken) {
        rte_pktmbuf_free(m);
    }
    EXPECT_EQ(fabric::mbufs_in_use(pools.frames.get()), 0u);
    EXPECT_EQ(fabric::mbufs_in_use(pools.wire.get()), 0u);
}

TEST(testbed_scale, PoolsLieInTheirOwnHugePageAlignedChunks)
{
    // Pool memory is mapped by the testbed, not taken from the EAL's 4 KB
    // pages (fabric/eal.cpp): every chunk starts on a 2 MB boundary, where
    // the kernel can back it with transparent huge pages, and no EAL memory
    // segment holds its mbufs.
    auto pool = fabric::make_mbuf_pool("scale_mapped", 40'000, RTE_MBUF_DEFAULT_BUF_SIZE);
    fabric::grow_mbuf_pool(pool.get(), 40'000); // a second chunk
    ASSERT_EQ(pool->nb_mem_chunks, 2u);
    const rte_mempool_memhdr* chunk = nullptr;
    STAILQ_FOREACH(chunk, &pool->mem_list, next)
    {
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(chunk->addr) % (std::uintptr_t{2} << 20), 0u);
    }
    rte_mbuf* m = rte_pktmbuf_alloc(pool.get());
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(rte_mem_virt2memseg(m, nullptr), nullptr);
    rte_pktmbuf_free(m);
    EXPECT_EQ(fabric::mbufs_in_use(pool.get()), 0u);
}

TEST(testbed_scale, AReceiveCopyHoldsWhatTheReceiverReads)
{
    // A DATA as the sender's engine leaves it: a header segment and the
    // host frame. The copy is one segment of the same length and metadata
    // whose first read_prefix bytes are the packet's (fabric/frames.hpp).
    auto headers = fabric::make_mbuf_pool("scale_copy_hdr", 1024, 256);
    auto frames = fabric::make_mbuf_pool("scale_copy_frames", 1024, RTE_MBUF_DEFAULT_BUF_SIZE);
    auto small = fabric::make_mbuf_pool("scale_copy_small", 1024, RTE_PKTMBUF_HEADROOM + 512);
    rte_mbuf* head = rte_pktmbuf_alloc(headers.get());
    rte_mbuf* frame = rte_pktmbuf_alloc(frames.get());
    ASSERT_NE(head, nullptr);
    ASSERT_NE(frame, nullptr);
    auto* h = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(head, 86));
    auto* f = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(frame, 1000));
    for (std::uint32_t i = 0; i < 86; ++i) {
        h[i] = static_cast<std::uint8_t>(i);
    }
    for (std::uint32_t i = 0; i < 1000; ++i) {
        f[i] = static_cast<std::uint8_t>(0x80 + i * 7);
    }
    head->hash.rss = 0x5eed1234;
    ASSERT_EQ(rte_pktmbuf_chain(head, frame), 0);

    rte_mbuf* copy = fabric::receive_copy(head, frames.get());
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(copy->nb_segs, 1u);
    EXPECT_EQ(copy->pkt_len, 1086u);
    EXPECT_EQ(copy->data_len, 1086u);
    EXPECT_EQ(copy->hash.rss, 0x5eed1234u);
    std::uint8_t expected[fabric::read_prefix];
    ASSERT_NE(rte_pktmbuf_read(head, 0, sizeof expected, expected), nullptr);
    EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(copy, const std::uint8_t*), expected, sizeof expected), 0);
    rte_pktmbuf_free(copy);

    // Longer than a buffer of the pool: copied whole, as a chain.
    copy = fabric::receive_copy(head, small.get());
    ASSERT_NE(copy, nullptr);
    EXPECT_GT(copy->nb_segs, 1u);
    ASSERT_EQ(copy->pkt_len, 1086u);
    for (std::uint32_t at = 0; at < 1086; at += 181) {
        std::uint8_t a = 0;
        std::uint8_t b = 0;
        EXPECT_EQ(*static_cast<const std::uint8_t*>(rte_pktmbuf_read(copy, at, 1, &a)),
                  *static_cast<const std::uint8_t*>(rte_pktmbuf_read(head, at, 1, &b)))
            << "byte " << at;
    }
    rte_pktmbuf_free(copy);
    rte_pktmbuf_free(head);
    EXPECT_EQ(fabric::mbufs_in_use(frames.get()), 0u);
    EXPECT_EQ(fabric::mbufs_in_use(small.get()), 0u);
}

TEST(testbed_scale, ADataNamesItsFlowFromTheSegmentThatHoldsTheFrame)
{
    // fabric/frames.hpp: make_frame leaves the flow id in hash.usr, and the
    // sender's side reads it from the segment where the host frame starts,
    // whether the engine wrote its headers in the frame's headroom (a first
    // transmission), chained a header segment to the frame, or chained one
    // to an indirect mbuf attached to it (a resend).
    auto pool = fabric::make_mbuf_pool("scale_flow_tag", 1024, RTE_MBUF_DEFAULT_BUF_SIZE);
    fabric::flow f;
    f.id = 70001;
    f.spec.bytes = 5000;
    rte_mbuf* frame = fabric::make_frame(pool.get(), f, 2, 0x0a000001, 0x0a000002, 1000);
    ASSERT_NE(frame, nullptr);
    EXPECT_EQ(fabric::read_tag(frame, 0)->flow, 70001u);
    EXPECT_EQ(fabric::frame_flow(frame, 0), 70001u);

    // Headers in the headroom.
    ASSERT_NE(rte_pktmbuf_prepend(frame, 86), nullptr);
    EXPECT_EQ(fabric::frame_flow(frame, 86), 70001u);
    EXPECT_EQ(fabric::read_tag(frame, 86)->flow, 70001u);
    rte_pktmbuf_adj(frame, 86);

    // A header segment in front: its own user tag is not the flow's.
    rte_mbuf* head = rte_pktmbuf_alloc(pool.get());
    ASSERT_NE(head, nullptr);
    ASSERT_NE(rte_pktmbuf_append(head, 86), nullptr);
    head->hash.usr = 0xdeadbeef;
    rte_mbuf* attached = rte_pktmbuf_alloc(pool.get());
    ASSERT_NE(attached, nullptr);
    rte_pktmbuf_attach(attached, frame);
    ASSERT_EQ(rte_pktmbuf_chain(head, attached), 0);
    EXPECT_EQ(fabric::frame_flow(head, 86), 70001u);
    EXPECT_EQ(fabric::read_tag(head, 86)->flow, 70001u);
    EXPECT_EQ(fabric::frame_flow(head, 85), 0xdeadbeefu);
    EXPECT_EQ(fabric::frame_flow(head, head->pkt_len), std::nullopt);
    rte_pktmbuf_free(head);
    rte_pktmbuf_free(frame);
    EXPECT_EQ(fabric::mbufs_in_use(pool.get()), 0u);
}

TEST(testbed_scale, AScenarioThatMayNotFitIsRefusedWithItsNumbers)
{
    // docs/testbed.md "Memory and scale": a fat tree of k = 4 (16 hosts, 20
    // switches), each host one flow out and one in: 16 engines of 110 KiB,
    // 16 send slots of 512 + 24 x 256 + 8 x 32 bytes, 16 receive slots of
    // 296 + 256 / 8 + 8 x 256 bytes (a receive_flow of 296 with the credit
    // routes of its two ports); forwarding rows toward the 16
    // destinations and the 20 switches, and ECMP rows at all 36 nodes, of 36
    // nodes x 4 B each.
    const auto s = scenario_from(permutation("fat_tree:k=4", "", 4096));
    const auto plan = fabric::simulation::plan(s);
    EXPECT_EQ(plan.engine_bytes, 16u * (110u << 10) + 16u * 6912u + 16u * 2376u);
    EXPECT_EQ(plan.forwarding_bytes, (16u + 20u + 36u) * 36u * 4u);
    EXPECT_EQ(plan.model_bytes(), plan.pools_and_tables_bytes() + plan.engine_bytes + plan.forwarding_bytes);
    EXPECT_NO_THROW(fabric::check_fits(plan, plan.model_bytes()));
    try {
        fabric::check_fits(plan, 1 << 20);
        FAIL() << "a run that may need " << plan.model_bytes() << " bytes fit in 1 MB";
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("LAPS engines and their flow slots 2 MB"), std::string::npos) << what;
        EXPECT_NE(what.find("above this machine's 1 MB"), std::string::npos) << what;
    }
}

// docs/testbed.md "No hugepages, no NIC": the engines' arena takes its
// buffers from huge_page_resource, each a mapping on a 2 MB boundary (where
// the kernel backs it with huge pages); an alignment beyond one huge page is
// refused, not silently missed. (How the arena bumps within a buffer is
// std::pmr::monotonic_buffer_resource's business, not tested here.)
TEST(testbed_scale, TheEnginesArenaTakesHugePageAlignedMappings)
{
    fabric::huge_page_resource pages;
    constexpr std::size_t bytes = 3u << 20;
    auto* memory = static_cast<unsigned char*>(pages.allocate(bytes, 64));
    ASSERT_NE(memory, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory) % fabric::huge_page_bytes, 0u);
    memory[0] = 1; // the whole of it is writable
    memory[bytes - 1] = 2;
    EXPECT_EQ(memory[0] + memory[bytes - 1], 3);
    pages.deallocate(memory, bytes, 64);
    EXPECT_THROW(static_cast<void>(pages.allocate(4096, 2 * fabric::huge_page_bytes)), std::bad_alloc);
}
