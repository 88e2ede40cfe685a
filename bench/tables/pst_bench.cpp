// PST lookup cost: rte_hash (lock-free readers) at 1K, 64K and 1M destinations,
// one key at a time and in bursts of 32. std::unordered_map is measured beside
// it as a reference point only: it has no lock-free concurrent readers.
//
//   build/bench/tables/bench_pst [--benchmark_filter=...]
// Random keys from the table, so large tables miss in cache as real traffic would.
#include "common/rng.hpp"
#include "tables/pst.hpp"

#include <benchmark/benchmark.h>
#include <rte_eal.h>

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

using namespace laps;

namespace {

struct fixture {
    std::unique_ptr<tables::pst> table;
    std::vector<tables::address> keys;
    std::vector<std::uint32_t> order; // lookup order: random permutation draws
};

fixture& table_of(std::uint32_t n)
{
    static std::map<std::uint32_t, fixture> cache;
    auto& f = cache[n];
    if (!f.table) {
        f.table = std::make_unique<tables::pst>("bench_pst_" + std::to_string(n), n);
        for (std::uint32_t i = 0; i < n; ++i) {
            f.keys.push_back(tables::address::ipv4(0x0a000000u + i * 7919u));
            f.table->add(f.keys.back(), i);
        }
        common::rng r(n);
        for (std::uint32_t i = 0; i < (1u << 20); ++i) {
            f.order.push_back(r.below(n));
        }
    }
    return f;
}

void pst_single(benchmark::State& state)
{
    auto& f = table_of(static_cast<std::uint32_t>(state.range(0)));
    std::size_t i = 0;
    std::uint64_t found = 0;
    for (auto _ : state) {
        const auto s = f.table->find(f.keys[f.order[i++ & (f.order.size() - 1)]]);
        found += s.has_value();
    }
    benchmark::DoNotOptimize(found);
    state.SetItemsProcessed(state.iterations());
}

void pst_burst32(benchmark::State& state)
{
    auto& f = table_of(static_cast<std::uint32_t>(state.range(0)));
    std::size_t i = 0;
    const tables::address* burst[32];
    std::uint32_t sets[tables::pst::max_burst];
    std::uint64_t hits = 0;
    for (auto _ : state) {
        for (auto& k : burst) {
            k = &f.keys[f.order[i++ & (f.order.size() - 1)]];
        }
        hits += static_cast<std::uint64_t>(__builtin_popcountll(f.table->find_burst(burst, 32, sets)));
    }
    benchmark::DoNotOptimize(hits);
    state.SetItemsProcessed(state.iterations() * 32);
}

struct address_hash {
    std::size_t operator()(const tables::address& a) const noexcept
    {
        return std::hash<std::string_view>{}(
            std::string_view(reinterpret_cast<const char*>(a.bytes.data()), a.bytes.size()));
    }
};

void unordered_map_single(benchmark::State& state)
{
    const auto n = static_cast<std::uint32_t>(state.range(0));
    auto& f = table_of(n);
    std::unordered_map<tables::address, std::uint32_t, address_hash> m;
    for (std::uint32_t i = 0; i < n; ++i) {
        m.emplace(f.keys[i], i);
    }
    std::size_t i = 0;
    std::uint64_t found = 0;
    for (auto _ : state) {
        found += m.count(f.keys[f.order[i++ & (f.order.size() - 1)]]);
    }
    benchmark::DoNotOptimize(found);
    state.SetItemsProcessed(state.iterations());
}

} // namespace

BENCHMARK(pst_single)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK(pst_burst32)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);
BENCHMARK(unordered_map_single)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20);

int main(int argc, char** argv)
{
    char arg0[] = "bench_pst", a1[] = "--no-huge", a2[] = "--no-shconf", a3[] = "--no-pci", a4[] = "-m",
         a5[] = "2048", a6[] = "-l", a7[] = "0", a8[] = "--log-level=lib.eal:error";
    char* eal_argv[] = {arg0, a1, a2, a3, a4, a5, a6, a7, a8};
    if (rte_eal_init(9, eal_argv) < 0) {
        return 1;
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    rte_eal_cleanup();
    return 0;
}
