#!/usr/bin/env python3
"""The full LAPS loop on 1, 2, 4, 8 workers: host frames per second and the
scaling efficiency rate(N) / (N x rate(1)).

Each run is configs/app-loop-2w.yaml generalised to N workers: the host port
is net_pcap with one rx_pcap per worker (infinite_rx; each file holds its own
flows, steering.host: queues), the fabric port the loop-back net_ring vdev
(steering.fabric: queues), so every worker encapsulates, sends, receives its
own DATA, ACKs and delivers it, and takes the ACK, all on the instance's
shared PIT (docs/app.md "The full LAPS loop"). Figures and the machine are in
docs/PERFORMANCE.md §5.

lcores: control on 0 and worker i on lcore i (-l 0-N) when the machine has
N + 1 cores; with exactly N cores the control lcore shares core 0 with worker
1 (it naps 200 us per turn); with fewer, that worker count is skipped.

  bench/app/scaling.py --laps build/app/laps [--workers 1,2,4,8] [--rounds 3] [--seconds 5]
  bench/app/scaling.py --laps build/app/laps --callgrind      # instructions per host frame, 1 and 2 workers
"""
import argparse
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "vdev"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest  # noqa: E402
from throughput import CALLGRIND, inclusive_ir, total_ir  # noqa: E402

FLOWS_PER_WORKER = 4


def write_pcaps(tmp, workers):
    for w in range(workers):
        path = f"{tmp}/loop-{w}.pcap"
        if not os.path.exists(path):
            # 1024-byte frames; each worker's file its own flows (its own source).
            flows = lapstest.traffic(src=f"10.1.{w // 250}.{w % 250 + 1}", udp_flows=FLOWS_PER_WORKER,
                                     udp_packets=16, roce_qps=0, roce_packets=0, size=982)
            lapstest.write_pcap(path, [f for _, f in flows])


def config(tmp, workers, stop):
    rx = ",".join(f"rx_pcap={tmp}/loop-{w}.pcap" for w in range(workers))
    path = f"{tmp}/loop-{workers}.yaml"
    with open(path, "w") as f:
        f.write(lapstest.loop_config(f"net_pcap0,{rx},infinite_rx=1", workers, stop,
                                     steering="{host: queues, fabric: queues}"))
    return path


def lcores(workers):
    """The lcore map for `workers` workers and the control lcore: a core each
    when there are enough, else the control lcore shares core 0; None when
    the machine has fewer cores than workers."""
    cores = os.cpu_count() or 1
    if workers + 1 <= cores:
        return f"0-{workers}"
    if workers <= cores:
        return "0@0," + ",".join(f"{w + 1}@{w}" for w in range(workers))
    return None


def run(laps, tmp, workers, stop, wrapper=()):
    cmd = lapstest.laps_command(laps, config(tmp, workers, stop), f"scaling-{workers}", lcores(workers),
                                wrapper=wrapper, kind="bench")
    return lapstest.report_of_run(cmd)[0]


def throughput(args, tmp):
    counts = [int(x) for x in args.workers.split(",")]
    rates = {}
    for n in counts:
        if lcores(n) is None:
            print(f"{n} workers: skipped, this machine has {os.cpu_count()} cores (needs {n})", flush=True)
            continue
        write_pcaps(tmp, n)
        best = 0.0
        for r in range(args.rounds):
            rep = run(args.laps, tmp, n, f"{{duration_ms: {int(args.seconds * 1000)}}}")
            rate = rep["laps.engine.host_rx"] / rep["laps.run.seconds"]
            per = [rep.get(f"laps.worker{w}.engine.host_rx", rep["laps.engine.host_rx"]) / rep["laps.run.seconds"]
                   for w in range(n)]
            print(f"{n} workers, round {r + 1}: {rate / 1e6:.3f} M host frames/s (per worker: "
                  + ", ".join(f"{x / 1e6:.2f}" for x in per) + f"); resent {rep['laps.engine.data_resent']}, "
                  f"wrong worker {rep['laps.engine.fabric_rx_wrong_worker']}", flush=True)
            best = max(best, rate)
        rates[n] = best
    if not rates:
        return
    base = rates.get(1)
    print("\nworkers | host frames/s (best of %d) | per worker | efficiency rate/(N x rate at 1)" % args.rounds)
    for n, rate in rates.items():
        eff = f"{rate / (n * base):.2f}" if base else "-"
        print(f"{n:7} | {rate / 1e6:10.3f} M | {rate / n / 1e6:8.3f} M | {eff}")


def callgrind(args, tmp):
    print("== callgrind: instructions per host frame at two run lengths (start-up cancels out)")
    for n in (1, 2):
        if lcores(n) is None:
            print(f"{n} workers: skipped ({os.cpu_count()} cores)")
            continue
        write_pcaps(tmp, n)
        points = []
        for frames in (50000, 150000):
            out = os.path.join(tmp, f"cg-{n}-{frames}.out")
            rep = run(args.laps, tmp, n, f"{{max_packets: {frames}}}",
                      CALLGRIND + [f"--callgrind-out-file={out}"])
            engine = sum(inclusive_ir(out, f) or 0 for f in (
                "laps::pipeline::engine::from_host(", "laps::pipeline::engine::from_fabric(",
                "laps::pipeline::engine::poll("))
            points.append((total_ir(out), rep["laps.engine.host_rx"], engine))
            print(f"  {n} workers, max_packets {frames}: {points[-1][0]} Ir, {points[-1][1]} host frames, "
                  f"engine calls {engine} Ir", flush=True)
        (ir1, f1, e1), (ir2, f2, e2) = points
        print(f"{n} workers: {(ir2 - ir1) / (f2 - f1):.0f} instructions per host frame (whole process), engine "
              f"calls {(e2 - e1) / (f2 - f1):.0f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--laps", required=True)
    ap.add_argument("--workers", default="1,2,4,8")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--callgrind", action="store_true", help="instructions per host frame instead of rates")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.callgrind:
            callgrind(args, tmp)
        else:
            throughput(args, tmp)


if __name__ == "__main__":
    main()
