// Path selection per packet (Alg. 1 + Eq. 1) at k = 1, 3, 8, 16 paths:
//   select_cached  : the common case, distribution unchanged since the last packet
//   select_after_ack: a member's latency changed before every packet (the
//                     worst case: one ACK per data packet), so every call rebuilds
//   build/bench/softmax/bench_selector
#include "../support/tables.hpp"
#include "softmax/selector.hpp"

#include <benchmark/benchmark.h>

using namespace laps;

namespace {

softmax::selector make_selector()
{
    softmax::selector_params p;
    p.beta = softmax::beta_params::normalized_alpha(1.0);
    return softmax::selector(p, 1);
}

void select_cached(benchmark::State& state)
{
    auto t = bench::one_destination(static_cast<int>(state.range(0)));
    auto s = make_selector();
    std::uint64_t sum = 0;
    std::int64_t now = 0;
    for (auto _ : state) {
        sum += s.select(t, 0, now).path;
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(state.iterations());
}

void select_after_ack(benchmark::State& state)
{
    const int k = static_cast<int>(state.range(0));
    auto t = bench::one_destination(k);
    auto s = make_selector();
    std::uint64_t sum = 0;
    std::int64_t now = 0;
    for (auto _ : state) {
        t.record_latency(static_cast<tables::path_id>(now % k), 12'000 + (now & 1023), now);
        sum += s.select(t, 0, now).path;
        ++now;
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(state.iterations());
}

} // namespace

BENCHMARK(select_cached)->Arg(1)->Arg(3)->Arg(8)->Arg(16);
BENCHMARK(select_after_ack)->Arg(1)->Arg(3)->Arg(8)->Arg(16);
BENCHMARK_MAIN();
