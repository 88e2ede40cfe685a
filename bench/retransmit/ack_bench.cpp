// ACK processing on the sender, the work of Alg. 2 + Alg. 3 per ACK:
// PIT update (realVal, time, clock offset), T and t over the destination's
// k = 8 paths, AIMD, and per-path loss detection in the flow's window.
//   build/bench/retransmit/bench_ack
#include "../support/tables.hpp"
#include "congestion/aimd.hpp"
#include "retransmit/sender_window.hpp"
#include "tables/path_table.hpp"

#include <benchmark/benchmark.h>

using namespace laps;

namespace {

void ack_processing(benchmark::State& state)
{
    const int k = static_cast<int>(state.range(0));
    tables::path_table table = bench::one_destination(k);
    const congestion::aimd_params params;
    congestion::aimd rate(params);
    retransmit::sender_window window(256, static_cast<std::uint8_t>(k));

    std::int64_t now = 0;
    std::uint64_t released = 0;
    // Keep the window half full: send one, ack the oldest in flight.
    for (int i = 0; i < 128; ++i) {
        window.send_new(static_cast<std::uint8_t>(i % k), i);
    }
    for (auto _ : state) {
        const retransmit::seq_t seq = window.lowest_unacked();
        const auto slot = static_cast<std::uint8_t>(seq % static_cast<std::uint32_t>(k));
        window.send_new(static_cast<std::uint8_t>(window.next_seq() % static_cast<std::uint32_t>(k)), seq);

        const std::uint32_t set = table.record_latency(slot, 11'000 + (now & 2047), now);
        rate.on_ack(params, now, table.max_base_valid(set), table.min_real_valid(set, now, false));
        const auto out = window.on_ack(seq, slot);
        released += out.has_handle;
        now += 100;
    }
    benchmark::DoNotOptimize(released);
    state.SetItemsProcessed(state.iterations());
}

} // namespace

BENCHMARK(ack_processing)->Arg(8)->Arg(16);
BENCHMARK_MAIN();
