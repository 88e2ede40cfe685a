// Per-packet costs of the byte-level wire code (no mbufs, no EAL):
//   build/bench/wire/bench_wire --benchmark_min_time=0.2
#include "tests/unit/wire/examples.hpp"
#include "tests/unit/wire/packet_builder.hpp"
#include "wire/ack.hpp"
#include "wire/classify.hpp"
#include "wire/encode.hpp"
#include "wire/parse.hpp"

#include <benchmark/benchmark.h>

namespace {

namespace ex = laps::test::wire_examples;
namespace wire = laps::wire;

void bm_parse_data(benchmark::State& state)
{
    const auto p = ex::data_packet();
    for (auto _ : state) {
        benchmark::DoNotOptimize(wire::parse(p));
    }
}
BENCHMARK(bm_parse_data);

void bm_classify_udp(benchmark::State& state)
{
    const auto f = ex::host_frame();
    for (auto _ : state) {
        benchmark::DoNotOptimize(wire::classify(f));
    }
}
BENCHMARK(bm_classify_udp);

void bm_classify_rocev2_vlan(benchmark::State& state)
{
    const auto f = laps::test::packet_builder()
                       .vlan(10)
                       .ipv4("10.0.0.1", "10.0.0.2")
                       .udp(49152, 4791)
                       .bth(0x1234)
                       .payload(1000)
                       .build();
    for (auto _ : state) {
        benchmark::DoNotOptimize(wire::classify(f));
    }
}
BENCHMARK(bm_classify_rocev2_vlan);

void bm_encode_headers(benchmark::State& state)
{
    const auto cfg = ex::sender_config();
    auto spec = ex::data_spec();
    std::array<std::uint8_t, wire::max_overhead> out{};
    std::uint32_t seq = 0;
    for (auto _ : state) {
        spec.header.seq = seq++;
        benchmark::DoNotOptimize(wire::encode_headers(out, cfg, spec, 1000));
        benchmark::ClobberMemory();
    }
}
BENCHMARK(bm_encode_headers);

void bm_ack_for_and_encode(benchmark::State& state)
{
    const auto cfg = ex::receiver_config();
    const auto data = wire::parse(ex::data_packet()).packet;
    std::array<std::uint8_t, wire::max_overhead> out{};
    laps::common::time_ns now = 1;
    for (auto _ : state) {
        benchmark::DoNotOptimize(wire::encode_ack(out, cfg, wire::ack_for(data, now++)));
        benchmark::ClobberMemory();
    }
}
BENCHMARK(bm_ack_for_and_encode);

void bm_flow_hash(benchmark::State& state)
{
    const auto key = wire::classify(ex::host_frame()).key;
    std::uint32_t seed = 0;
    for (auto _ : state) {
        benchmark::DoNotOptimize(wire::flow_hash(key, seed++));
    }
}
BENCHMARK(bm_flow_hash);

} // namespace

BENCHMARK_MAIN();
