// PST on rte_hash (paper §III-C): exact match on IPv4 and IPv6 destinations,
// burst lookups, and lock-free readers while the control plane edits.
#include "tables/pst.hpp"

#include <gtest/gtest.h>

#include <rte_malloc.h>
#include <rte_memzone.h>
#include <rte_rcu_qsbr.h>

#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <vector>

using namespace laps::tables;

TEST(Pst, FindsWhatWasAddedAndNothingElse)
{
    pst t("pst_find", 64);
    t.add(*address::parse("10.0.0.2"), 7);
    t.add(*address::parse("fd00::2"), 9);
    EXPECT_EQ(t.find(*address::parse("10.0.0.2")), 7u);
    EXPECT_EQ(t.find(*address::parse("fd00::2")), 9u);
    EXPECT_FALSE(t.find(*address::parse("10.0.0.3")));
    // The IPv4-mapped key must not collide with a plain IPv6 address.
    EXPECT_FALSE(t.find(*address::parse("::2")));
    EXPECT_EQ(t.size(), 2u);
    EXPECT_TRUE(t.remove(*address::parse("10.0.0.2")));
    EXPECT_FALSE(t.remove(*address::parse("10.0.0.2")));
    EXPECT_FALSE(t.find(*address::parse("10.0.0.2")));
    EXPECT_EQ(t.size(), 1u);
}

TEST(Pst, AddReplacesTheSetOfAnExistingDestination)
{
    pst t("pst_replace", 16);
    t.add(address::ipv4(1), 1);
    t.add(address::ipv4(1), 2);
    EXPECT_EQ(t.find(address::ipv4(1)), 2u);
    EXPECT_EQ(t.size(), 1u);
}

TEST(Pst, BurstLookupReportsHitsByBit)
{
    pst t("pst_burst", 1024);
    for (std::uint32_t i = 0; i < 100; ++i) {
        t.add(address::ipv4(0x0a000000u + i), i * 3);
    }
    std::vector<address> keys;
    for (std::uint32_t i = 0; i < 40; ++i) {
        keys.push_back(address::ipv4(0x0a000000u + i * 5)); // hits for i*5 < 100
    }
    std::vector<const address*> ptrs;
    for (auto& k : keys) {
        ptrs.push_back(&k);
    }
    std::uint32_t sets[pst::max_burst] = {};
    const auto hits = t.find_burst(ptrs.data(), static_cast<unsigned>(ptrs.size()), sets);
    for (std::uint32_t i = 0; i < 40; ++i) {
        const bool expect_hit = i * 5 < 100;
        EXPECT_EQ(((hits >> i) & 1u) != 0, expect_hit) << i;
        if (expect_hit) {
            EXPECT_EQ(sets[i], i * 5 * 3);
        }
    }
}

TEST(Pst, FullTableGivesAClearError)
{
    pst t("pst_full", 8);
    std::uint32_t added = 0;
    try {
        for (; added < 10'000; ++added) {
            t.add(address::ipv4(added), added);
        }
        FAIL() << "a table of capacity 8 took 10000 keys";
    } catch (const pst_error& e) {
        EXPECT_NE(std::string(e.what()).find("table full"), std::string::npos) << e.what();
    }
    EXPECT_GE(added, 8u);
}

// Readers never lock and never miss a key that stays in the table while the
// control plane adds and deletes other keys (RW_CONCURRENCY_LF). Deleted
// slots are recycled through RCU once the reader reports quiescence, as the
// app's workers do between bursts.
TEST(Pst, ReadersSeeStableKeysWhileWriterAddsAndDeletes)
{
    const std::size_t qsbr_size = rte_rcu_qsbr_get_memsize(1);
    // Declared before the table so it outlives it (the table's defer queue points here).
    std::unique_ptr<rte_rcu_qsbr, decltype(&rte_free)> qsbr_owner(
        static_cast<rte_rcu_qsbr*>(rte_zmalloc("pst_test_qsbr", qsbr_size, RTE_CACHE_LINE_SIZE)), &rte_free);
    auto* qsbr = qsbr_owner.get();
    ASSERT_NE(qsbr, nullptr);
    ASSERT_EQ(rte_rcu_qsbr_init(qsbr, 1), 0);
    ASSERT_EQ(rte_rcu_qsbr_thread_register(qsbr, 0), 0);

    pst t("pst_concurrent", 4096);
    t.attach_rcu(qsbr);
    for (std::uint32_t i = 0; i < 256; ++i) {
        t.add(address::ipv4(i), i);
    }
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> misses{0};
    std::atomic<std::uint64_t> lookups{0};
    std::thread reader([&] {
        rte_rcu_qsbr_thread_online(qsbr, 0);
        while (!stop.load(std::memory_order_relaxed)) {
            for (std::uint32_t i = 0; i < 256; ++i) {
                const auto s = t.find(address::ipv4(i));
                if (!s || *s != i) {
                    misses.fetch_add(1, std::memory_order_relaxed);
                }
            }
            lookups.fetch_add(256, std::memory_order_relaxed);
            rte_rcu_qsbr_quiescent(qsbr, 0);
        }
        rte_rcu_qsbr_thread_offline(qsbr, 0);
    });
    // Churn other keys until the reader has done plenty of lookups.
    std::string writer_error;
    try {
        // 4096 slots, 1000 churned per round: from the fourth round on, adds
        // need slots that only the reader's quiescence can release.
        for (std::uint32_t round = 0; round < 20 || lookups.load() < 200'000; ++round) {
            for (std::uint32_t i = 1000; i < 2000; ++i) {
                t.add(address::ipv4(i), i);
            }
            for (std::uint32_t i = 1000; i < 2000; ++i) {
                t.remove(address::ipv4(i));
            }
        }
    } catch (const pst_error& e) {
        writer_error = e.what();
    }
    stop = true;
    reader.join();
    EXPECT_EQ(writer_error, "");
    EXPECT_EQ(misses.load(), 0u);
    EXPECT_GE(lookups.load(), 200'000u);
}

TEST(Pst, ForEachVisitsEveryEntryOnce)
{
    pst t("pst_iterate", 64);
    for (std::uint32_t i = 0; i < 20; ++i) {
        t.add(address::ipv4(0x0a000000u + i), i * 2);
    }
    t.remove(address::ipv4(0x0a000005u));
    std::map<std::uint32_t, std::uint32_t> seen;
    t.for_each([&](const address& a, std::uint32_t set) { seen[a.ipv4_host_order() & 0xff] = set; });
    EXPECT_EQ(seen.size(), 19u);
    EXPECT_EQ(seen.count(5), 0u);
    EXPECT_EQ(seen[7], 14u);
}

// Shared PSTs (the testbed's thousands of engines): each owner sees its own
// rows only, holds to its own capacity, and takes no memzone of its own,
// which is what lets more than RTE_MAX_MEMZONE / 2 engines run in a process.
TEST(Pst, SharedTableKeepsOwnersApart)
{
    pst_index index("pst_shared", 64);
    pst a(index, 1, 8);
    pst b(index, 2, 8);
    const address d = *address::parse("10.0.0.9");
    a.add(d, 3);
    b.add(d, 5);
    EXPECT_EQ(a.find(d), 3u);
    EXPECT_EQ(b.find(d), 5u);
    EXPECT_TRUE(a.remove(d));
    EXPECT_FALSE(a.find(d));
    EXPECT_EQ(b.find(d), 5u);
    EXPECT_EQ(a.size(), 0u);
    EXPECT_EQ(b.size(), 1u);

    for (std::uint32_t i = 0; i < 8; ++i) {
        a.add(address::ipv4(0x0b000000u + i), 100 + i);
    }
    try {
        a.add(address::ipv4(0x0c000000u), 1);
        FAIL() << "a shared PST of capacity 8 took a 9th row";
    } catch (const pst_error& e) {
        EXPECT_NE(std::string(e.what()).find("table full (capacity 8)"), std::string::npos) << e.what();
    }
    a.add(address::ipv4(0x0b000003u), 7); // replacing needs no room
    EXPECT_EQ(a.find(address::ipv4(0x0b000003u)), 7u);
    b.add(address::ipv4(0x0c000000u), 1); // b's share is its own

    std::map<std::uint32_t, std::uint32_t> seen;
    a.for_each([&](const address& x, std::uint32_t set) { seen[x.ipv4_host_order()] = set; });
    EXPECT_EQ(seen.size(), 8u);
    EXPECT_EQ(seen.count(d.ipv4_host_order()), 0u);
    EXPECT_EQ(seen[0x0b000003u], 7u);

    const address k0 = address::ipv4(0x0b000001u);
    const address k1 = address::ipv4(0x0c000000u); // b's, not a's
    const address* keys[] = {&k0, &k1};
    std::uint32_t sets[pst::max_burst] = {};
    EXPECT_EQ(a.find_burst(keys, 2, sets), 1u);
    EXPECT_EQ(sets[0], 101u);
    EXPECT_EQ(b.find_burst(keys, 2, sets), 2u);
    EXPECT_EQ(sets[1], 1u);

    EXPECT_THROW(pst(index, 0, 8), pst_error);
}

TEST(Pst, SharedTablesTakeNoMemzoneEach)
{
    const auto memzones = [] {
        unsigned n = 0;
        rte_memzone_walk([](const rte_memzone*, void* count) { ++*static_cast<unsigned*>(count); }, &n);
        return n;
    };
    constexpr std::uint32_t owners = 3000; // above RTE_MAX_MEMZONE / 2 own tables
    pst_index index("pst_many", owners * 8);
    const unsigned before = memzones();
    std::vector<std::unique_ptr<pst>> tables;
    for (std::uint32_t i = 1; i <= owners; ++i) {
        tables.push_back(std::make_unique<pst>(index, i, 8));
        tables.back()->add(address::ipv4(0x0a000001u), i);
    }
    EXPECT_EQ(memzones(), before);
    EXPECT_EQ(tables[1234]->find(address::ipv4(0x0a000001u)), 1235u);
}
