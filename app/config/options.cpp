#include "app/config/options.hpp"

#include "app/errors.hpp"

#include <string_view>

namespace laps::app {

const char* const usage_text = R"(usage: laps [EAL options] -- --config FILE.yaml [--cmdline-file FILE] [--no-interactive]
            [--clock-ahead-ms MS]

LAPS (Latency Aware Packet Spraying) between a host port and a fabric port.
Every host frame to a destination in the PST is sent on a path chosen by the
softmax of measured latencies, paced by AIMD, kept until ACKed; every LAPS
packet from the fabric is ACKed, decapsulated and delivered to the host.

Options (after "--"):
  --config FILE       the YAML config (docs/app.md); required
  --cmdline-file F    run the console commands of F at start, echoed after the
                      "laps> " prompt (docs/console.md); then the console stays
                      open on stdin, unless --no-interactive
  --no-interactive    no console on stdin: after --cmdline-file, quit; without
                      it, run until a run: stop condition, SIGINT (Ctrl-C) or
                      SIGTERM
  --clock-ahead-ms MS  start this process's clock MS ms ahead (0 to 10^10): a
                      host whose clock is not its peers' (tests; tools/chaos
                      restarts a sender with its clock an hour behind the run
                      before); LAPS needs no synchronised clocks (docs/design.md §3.7)
  --help              this text

EAL options (before "--"), for example with no NIC and no hugepages:
  -l 0,1 --no-huge -m 512 --no-pci --no-shconf --file-prefix laps1
The main lcore is the control lcore; the others run workers (and the link).

Config (YAML; unknown keys are errors; docs/app.md has a full example):
  ports:
    host:   {devargs: "net_pcap0,rx_pcap=in.pcap,tx_pcap=host.pcap", rx_desc: 1024, tx_desc: 1024}
    fabric: {devargs: "net_null1"}      # or a PCI address given to EAL with -a
  lcores: {control: 0, workers: [1], idle: spin|yield|sleep}    # default workers: all other lcores
  mempool: {mbufs: 16383, control_mbufs: 8191, cache: 256, data_room: 2176}
  outer: {ip: 10.0.0.1, mac: port, next_hop_mac: 02:00:00:00:00:fe, udp_port: 19521, mtu: 1500, ttl: 64}
  engine: {unknown_destination: pass|drop, oversize: drop|pass, in_order: false, acks: per-packet|coalesced,
           flow_queue_packets: 64, flow_idle_ms: 100, staging_packets: 4096, poll_budget: 256, burst: 32}
  steering: {host: auto|rss|software, fabric: auto|rte_flow|software, tag_bits: <auto>, ring_size: 4096}
  stats: {interval_ms: 0}                        # 0: no periodic line (the example configs: 1000)
  metrics: {listen: 127.0.0.1:9464}              # Prometheus endpoint; off unless given (port 0: any)
  capture: {file: F.pcapng, side: both, pid: N, count: N, seconds: S}   # live capture from the start
  run: {max_packets: 0, max_fabric_packets: 0, duration_ms: 0, idle_ms: 0, drain_ms: 100}
  paths: {pst: [...], pit: [...]}                # explicit tables, or:
  topology: {file: configs/topologies/rail.yaml, host: 0, paths: auto}
  version, host, selection, congestion, retransmit, tables, baseval: docs/configuration.md
  Two instances joined by an emulated link (net_ring):
    instances: {a: {...instance keys...}, b: {...}}  with ports.fabric: {link: true}
    link: {lcore: 3, default_delay_us: 10, paths: [{pid: 0, delay_us: 20}, {pid: 1, delay_us: 80}]}

Console (without --no-interactive): "laps> ", help lists the commands; Ctrl-C
clears the line (as in testpmd), quit or Ctrl-D stops laps.

Stop conditions (run:): max_packets host frames taken by the engines,
max_fabric_packets received from the fabric, duration_ms, idle_ms with
nothing received; then up to drain_ms to send what the engines hold.
At exit laps prints every counter as "name: value", and checks that every
mbuf is back in its mempool.

Exit status: 0 ok; 1 start-up error (port, lcore, memory); 2 bad command line
or config; 3 mbufs leaked at exit.
)";

bool wants_help(int argc, char** argv)
{
    bool after = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--" && !after) {
            after = true;
            continue;
        }
        if ((after || argc == 2) && (a == "--help" || a == "-h")) {
            return true;
        }
    }
    return false;
}

options parse_options(const std::vector<std::string>& args)
{
    options o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= args.size()) {
                throw usage_error(a + " needs a value");
            }
            return args[++i];
        };
        if (a == "--config") {
            o.config = value();
        } else if (a == "--cmdline-file") {
            o.cmdline_file = value();
        } else if (a == "--no-interactive") {
            o.interactive = false;
        } else if (a == "--clock-ahead-ms") {
            const std::string v = value();
            std::size_t used = 0;
            long long ms = -1;
            try {
                ms = std::stoll(v, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used != v.size() || ms < 0 || ms > 10'000'000'000LL) {
                throw usage_error("--clock-ahead-ms: '" + v + "' is not a whole number of ms in [0, 10000000000]");
            }
            o.clock_ahead_ns = ms * 1'000'000;
        } else if (a == "--help" || a == "-h") {
            o.help = true;
        } else {
            throw usage_error("unknown option '" + a + "'");
        }
    }
    if (!o.help && o.config.empty()) {
        throw usage_error("--config FILE.yaml is required");
    }
    return o;
}

} // namespace laps::app
