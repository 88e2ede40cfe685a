// Engine throughput on one core without ports (docs/PERFORMANCE.md §2):
// 1 KB host frames from a mempool, 1024 flows (or 64K) to 64 destinations with k = 8
// paths each, virtual time advancing at 100 Gb/s. Two workloads:
//   interleaved (default): every frame of a burst from the next flow in turn;
//   elephants: 16 flows, each burst 32 frames of one flow (RDMA QPs,
//              collectives: what a host port hands over in one rx burst).
//
//   sender path  : A.from_host(32 frames) + A.from_fabric(their 32 ACKs)
//                  (classify, PST, flow table, pacing, Eq. 1, encapsulation,
//                   and per ACK: PIT, AIMD, Alg. 3)
//   receiver path: B.from_fabric(32 DATA) (parse, flow, duplicates, ACK build,
//                  decapsulation)
// Each side is timed alone with the TSC around its own calls.
//
//   build/bench/pipeline/bench_engine [--acks MODE]         Google Benchmark
//   build/bench/pipeline/bench_engine --count N [--no-probing] [--workload interleaved|elephants] [--flows F]
//                                     [--cc fair|coupled|credit] [--acks per-packet|coalesced] [--auth]
//                                     [--receiver-polls]
//     N packets, no timing; --auth: both engines sign and verify every packet (docs/security.md)
//     (for valgrind --tool=callgrind at two N: instructions per packet)
#include "../../tests/unit/wire/packet_builder.hpp"
#include "pipeline/engine.hpp"

#include <benchmark/benchmark.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace laps;

namespace {

constexpr std::uint32_t default_flows = 1024;
constexpr std::uint32_t elephant_flows = 16;
constexpr std::uint32_t destinations = 64;
constexpr std::uint32_t paths_per_destination = 8;
constexpr std::uint16_t burst = 32;
constexpr std::size_t frame_payload = 1024 - 14 - 20 - 8;

struct pool_free {
    void operator()(rte_mempool* p) const noexcept { rte_mempool_free(p); }
};

// --cc fair: the fair rate control (docs/congestion.md) instead of Alg. 2;
// --cc coupled: fair with a rate per path (congestion.fair.coupled_paths).
// --cc credit: receiver-paced credits; B paces them for a 200 Gb/s downlink,
// twice what A sends, so that every DATA asks for a credit and gets one (a
// CREDIT packet each) and the cost measured is the credit path's, with no
// DATA held back by it. It implies --receiver-polls.
// --receiver-polls: B is also polled once per DATA time of each burst (32
// polls between bursts), as a worker's loop polls it; a pacer grants only
// what is due when it runs (one turn behind at most), so credits need it.
// Run the other variants with it for the comparison.
bool bench_receiver_polls = false;
congestion::cc_variant bench_cc = congestion::cc_variant::paper;
bool bench_coupled = false;
// --auth: a fabric key on both engines.
bool bench_auth = false;
// --acks coalesced: the receiver answers each (flow, path) run of a burst
// with one ACK_RUN (docs/wire-format.md); per-packet: one ACK per DATA.
pipeline::ack_mode bench_acks = pipeline::ack_mode::per_packet;

// Frames in a row from one flow: 1 interleaved, `burst` elephants.
struct workload {
    std::uint32_t flows;
    std::uint32_t run_length;
};

pipeline::engine_config make_config(const std::string& name, std::uint8_t host, rte_mempool* control, bool tables,
                                    bool probing, std::uint32_t flows)
{
    pipeline::engine_config c;
    c.name = name;
    c.control_pool = control;
    c.outer.own_mac = {2, 0, 0, 0, 0, host};
    c.outer.next_hop_mac = {2, 0, 0, 0, 0, 0xfe};
    c.outer.own_ip = 0x0a000000u | host;
    c.outer.mtu = 9000;
    c.algo.tables.flow_capacity = 2 * flows;
    c.algo.tables.estimate_clock_offset = false;
    c.algo.retransmit.window_packets = 256;
    c.algo.selection.probing = probing;
    c.algo.congestion.aimd.variant = bench_cc;
    c.algo.congestion.aimd.fair.coupled_paths = bench_coupled;
    c.algo.congestion.aimd.credit.downlink_bps = 200e9;
    c.epoch = host;
    c.acks = bench_acks;
    if (bench_auth) {
        c.auth_key = wire::auth_key{{0x6c, 0x61, 0x70, 0x73, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}};
    }
    if (tables) {
        for (std::uint32_t d = 0; d < destinations; ++d) {
            tables::pst_row row{tables::address::ipv4(0x0b000000u + d), {}};
            for (std::uint32_t p = 0; p < paths_per_destination; ++p) {
                tables::pit_row r;
                r.pid = static_cast<tables::path_id>(d * paths_per_destination + p);
                r.base_ns = 5000 + 500 * p;
                r.anchor_count = 1;
                r.anchors[0] = 1000 + p;
                c.algo.paths.pit.push_back(r);
                row.pids.push_back(r.pid);
            }
            c.algo.paths.pst.push_back(row);
        }
    }
    return c;
}

// 100 Gb/s of 1 KB frames: 32 frames every 2.7 us of virtual time.
constexpr auto step_ns = static_cast<common::time_ns>(burst * (1024 + 24) * 8 / 100.0);

class rig {
public:
    rig(bool probing, workload w)
        : _run_length(w.run_length),
          _frames(rte_pktmbuf_pool_create("bench_frames", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY)),
          _control(rte_pktmbuf_pool_create("bench_control", 16383, 256, 0,
                                           bench_acks == pipeline::ack_mode::coalesced
                                               ? wire::coalescing_mbuf_data_room
                                               : wire::header_mbuf_data_room,
                                           SOCKET_ID_ANY))
    {
        if (!_frames || !_control) {
            throw std::runtime_error("bench: mempool creation failed");
        }
        _a = std::make_unique<pipeline::engine>(make_config("bench_a", 1, _control.get(), true, probing, w.flows));
        _b = std::make_unique<pipeline::engine>(make_config("bench_b", 2, _control.get(), false, probing, w.flows));
        for (std::uint32_t f = 0; f < w.flows; ++f) {
            const std::uint32_t d = f % destinations;
            const std::string dst = "11.0.0." + std::to_string(d);
            _templates.push_back(test::packet_builder()
                                     .eth({2, 0, 0, 0, 0, 2}, {2, 0, 0, 0, 0, 1})
                                     .ipv4("10.0.0.1", dst)
                                     .udp(static_cast<std::uint16_t>(10000 + f), 4791 + 1)
                                     .payload(frame_payload)
                                     .build());
        }
    }

    ~rig()
    {
        _a.reset();
        _b.reset();
    }

    // One burst through A and B. Adds the TSC cycles spent in A and in B.
    void step(std::uint64_t& sender_cycles, std::uint64_t& receiver_cycles)
    {
        rte_mbuf* in[burst];
        for (auto& m : in) {
            const auto& t = _templates[(_next_frame++ / _run_length) % _templates.size()];
            m = rte_pktmbuf_alloc(_frames.get());
            std::memcpy(rte_pktmbuf_append(m, static_cast<std::uint16_t>(t.size())), t.data(), t.size());
        }
        rte_mbuf* data[2 * burst];
        rte_mbuf* acks[2 * burst];
        const std::uint64_t t0 = rte_rdtsc();
        const std::uint16_t n_data = sender_sends(in, data);
        const std::uint64_t t1 = rte_rdtsc();
        const std::uint16_t n_acks = receiver_receives(data, n_data, acks);
        _answer_packets += n_acks;
        const std::uint64_t t2 = rte_rdtsc();
        sender_takes_acks(acks, n_acks);
        const std::uint64_t t3 = rte_rdtsc();
        sender_cycles += (t1 - t0) + (t3 - t2);
        receiver_cycles += t2 - t1;
        _now += step_ns;
    }

    // The three halves are separate, non-inlined functions so that callgrind
    // reports instructions per side (inclusive cost of each).
    [[gnu::noinline]] std::uint16_t sender_sends(rte_mbuf** in, rte_mbuf** data)
    {
        const std::uint16_t taken = _a->from_host(in, burst, _now);
        for (std::uint16_t i = 0; i < burst - taken; ++i) { // refused ones are at the front
            rte_pktmbuf_free(in[i]);
            ++_refused;
        }
        // As a worker's loop does after its bursts: paced sends and timers
        // due (an elephant's run of 32 frames waits on its pacer).
        _a->poll(_now);
        return _a->take_to_fabric(data, 2 * burst);
    }

    [[gnu::noinline]] std::uint16_t receiver_receives(rte_mbuf** data, std::uint16_t n, rte_mbuf** acks)
    {
        // B's clock reads 6 us later: the one-way delay of the paths.
        _b->from_fabric(data, n, _now + 6000);
        if (bench_receiver_polls) {
            for (std::uint16_t k = 1; k <= burst; ++k) {
                _b->poll(_now + 6000 + k * step_ns / burst);
            }
        }
        rte_mbuf* delivered[2 * burst];
        const std::uint16_t n_host = _b->take_to_host(delivered, 2 * burst);
        rte_pktmbuf_free_bulk(delivered, n_host);
        return _b->take_to_fabric(acks, 2 * burst);
    }

    [[gnu::noinline]] void sender_takes_acks(rte_mbuf** acks, std::uint16_t n)
    {
        _a->from_fabric(acks, n, _now + 12'000);
    }

    // DATA packets sent (probes, also in the burst, are not counted).
    std::uint64_t packets() const { return _a->counters().data_sent; }
    std::uint64_t refused() const { return _refused; }
    // Packets the receiver sent back (ACKs, ACK_RUNs, PROBE_ACKs).
    std::uint64_t answer_packets() const { return _answer_packets; }
    const pipeline::engine& sender() const { return *_a; }
    const pipeline::engine& receiver() const { return *_b; }

private:
    std::uint32_t _run_length;
    std::unique_ptr<rte_mempool, pool_free> _frames;
    std::unique_ptr<rte_mempool, pool_free> _control;
    std::unique_ptr<pipeline::engine> _a;
    std::unique_ptr<pipeline::engine> _b;
    std::vector<test::bytes> _templates;
    std::uint64_t _next_frame = 0;
    common::time_ns _now = 1'000'000;
    std::uint64_t _refused = 0;
    std::uint64_t _answer_packets = 0;
};

void engine_paths(benchmark::State& state)
{
    const auto flows = static_cast<std::uint32_t>(state.range(1));
    rig r(state.range(0) != 0, workload{flows, static_cast<std::uint32_t>(state.range(2))});
    std::uint64_t sender = 0;
    std::uint64_t receiver = 0;
    // Warm up: every flow created (twice over), tables in cache.
    for (std::uint32_t i = 0; i < std::max<std::uint32_t>(2000, 2 * flows / burst); ++i) {
        r.step(sender, receiver);
    }
    sender = receiver = 0;
    const std::uint64_t start_packets = r.packets();
    for (auto _ : state) {
        r.step(sender, receiver);
    }
    const double packets = static_cast<double>(r.packets() - start_packets);
    const double ns_per_cycle = 1e9 / static_cast<double>(rte_get_tsc_hz());
    state.counters["sender_ns_per_pkt"] = static_cast<double>(sender) * ns_per_cycle / packets;
    state.counters["receiver_ns_per_pkt"] = static_cast<double>(receiver) * ns_per_cycle / packets;
    state.counters["sender_Mpps"] = packets / (static_cast<double>(sender) * ns_per_cycle / 1e3);
    state.counters["receiver_Mpps"] = packets / (static_cast<double>(receiver) * ns_per_cycle / 1e3);
    state.counters["refused"] = static_cast<double>(r.refused());
    state.SetItemsProcessed(static_cast<std::int64_t>(packets));
}

} // namespace

// Args: Alg. 1 probing on (1) or off (0), then the number of flows. With 512
// paths, each path hears an ACK every ~40 us of traffic, more than 2 x its
// 6 us realVal: with probing on, nearly every packet also sends a probe (at
// most one per packet). 64K flows: a flow table far bigger than the caches.
// The third argument: frames in a row from one flow (32: elephants).
BENCHMARK(engine_paths)
    ->Args({1, default_flows, 1})
    ->Args({0, default_flows, 1})
    ->Args({0, 65536, 1})
    ->Args({0, elephant_flows, burst})
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2.0);

int main(int argc, char** argv)
{
    char arg0[] = "bench_engine", a1[] = "--no-huge", a2[] = "--no-shconf", a3[] = "--no-pci", a4[] = "-m",
         a5[] = "1024", a6[] = "-l", a7[] = "0", a8[] = "--log-level=lib.eal:error";
    char* eal_argv[] = {arg0, a1, a2, a3, a4, a5, a6, a7, a8};
    if (rte_eal_init(9, eal_argv) < 0) {
        std::fprintf(stderr, "bench_engine: EAL init failed\n");
        return 1;
    }
    int rc = 0;
    if (argc >= 3 && std::strcmp(argv[1], "--count") == 0) {
        // Fixed work for callgrind: N packets, then the counters.
        const std::uint64_t n = std::stoull(argv[2]);
        bool probing = true;
        std::uint32_t flows = 0; // the workload's unless --flows
        std::uint32_t run_length = 1;
        for (int i = 3; i < argc; ++i) {
            if (std::strcmp(argv[i], "--no-probing") == 0) {
                probing = false;
            } else if (std::strcmp(argv[i], "--workload") == 0 && i + 1 < argc &&
                       (std::strcmp(argv[i + 1], "interleaved") == 0 || std::strcmp(argv[i + 1], "elephants") == 0)) {
                run_length = std::strcmp(argv[++i], "elephants") == 0 ? burst : 1;
            } else if (std::strcmp(argv[i], "--flows") == 0 && i + 1 < argc) {
                flows = static_cast<std::uint32_t>(std::stoul(argv[++i]));
            } else if (std::strcmp(argv[i], "--cc") == 0 && i + 1 < argc &&
                       (std::strcmp(argv[i + 1], "fair") == 0 || std::strcmp(argv[i + 1], "coupled") == 0 ||
                        std::strcmp(argv[i + 1], "credit") == 0)) {
                bench_cc = std::strcmp(argv[i + 1], "credit") == 0 ? congestion::cc_variant::credit
                                                                   : congestion::cc_variant::fair;
                bench_coupled = std::strcmp(argv[i + 1], "coupled") == 0;
                ++i;
            } else if (std::strcmp(argv[i], "--acks") == 0 && i + 1 < argc &&
                       common::find_named(pipeline::ack_mode_names, argv[i + 1]).has_value()) {
                bench_acks = *common::find_named(pipeline::ack_mode_names, argv[++i]);
            } else if (std::strcmp(argv[i], "--auth") == 0) {
                bench_auth = true;
            } else if (std::strcmp(argv[i], "--receiver-polls") == 0) {
                bench_receiver_polls = true;
            } else {
                std::fprintf(stderr,
                             "bench_engine: unknown argument '%s' (--count N [--no-probing] [--workload "
                             "interleaved|elephants] [--flows F] [--cc fair|coupled|credit] [--acks per-packet|coalesced] "
                             "[--auth] [--receiver-polls])\n",
                             argv[i]);
                rte_eal_cleanup();
                return 2;
            }
        }
        if (flows == 0) {
            flows = run_length == 1 ? default_flows : elephant_flows;
        }
        bench_receiver_polls = bench_receiver_polls || bench_cc == congestion::cc_variant::credit;
        rig r(probing, workload{flows, run_length});
        std::uint64_t s = 0;
        std::uint64_t d = 0;
        while (r.packets() < n) {
            r.step(s, d);
        }
        std::printf("packets %llu refused %llu answer_packets %llu\n", static_cast<unsigned long long>(r.packets()),
                    static_cast<unsigned long long>(r.refused()), static_cast<unsigned long long>(r.answer_packets()));
        if (bench_cc == congestion::cc_variant::credit) {
            const auto& a = r.sender().counters();
            std::printf("credits sent %llu taken %llu stale %llu, sender waits %llu fallbacks %llu\n",
                        static_cast<unsigned long long>(r.receiver().counters().credit_sent),
                        static_cast<unsigned long long>(a.credit_taken), static_cast<unsigned long long>(a.credit_stale),
                        static_cast<unsigned long long>(a.credit_wait), static_cast<unsigned long long>(a.credit_fallback));
        }
    } else {
        // --acks MODE beside Google Benchmark's own flags (timed runs of both modes).
        int kept = 1;
        for (int i = 1; i < argc; ++i) {
            if (std::strcmp(argv[i], "--acks") == 0 && i + 1 < argc &&
                common::find_named(pipeline::ack_mode_names, argv[i + 1]).has_value()) {
                bench_acks = *common::find_named(pipeline::ack_mode_names, argv[++i]);
            } else {
                argv[kept++] = argv[i];
            }
        }
        argc = kept;
        benchmark::Initialize(&argc, argv);
        benchmark::RunSpecifiedBenchmarks();
        benchmark::Shutdown();
    }
    rte_eal_cleanup();
    return rc;
}
