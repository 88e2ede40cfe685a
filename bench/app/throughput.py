#!/usr/bin/env python3
"""laps vs dpdk-testpmd --forward-mode=io on the same vdevs, alternately.

Modes (docs/PERFORMANCE.md §4 has the figures and the exact commands):
  null     laps with configs/app-null.yaml (net_null0 copy=1 size=1024 as the
           host port, net_null1 size=1024 as the fabric port) and testpmd io on
           the same two vdevs; packets received per second per worker lcore
           (both ports, both programs forward both directions).
  loop     laps on the full LAPS path: host = net_pcap infinite_rx of 1 KB UDP
           frames to a PST destination, fabric = a loop-back net_ring vdev, so
           the engine receives its own DATA, ACKs it, delivers the frame and
           takes the ACK: host frames per second per worker. testpmd io on the
           same vdevs for reference.
  callgrind  instructions per packet from valgrind --tool=callgrind at two run
           lengths (start-up and shutdown cancel out), for laps and testpmd io
           on net_null, and laps in loop mode (per host frame).

The loop's host frames: --workload interleaved (default) gives 8 UDP flows,
one frame of each in turn; elephants gives the same flows in runs of 32
frames of one flow (a host port's rx burst of one RDMA QP or collective).

usage: bench/app/throughput.py --laps build/app/laps [--mode null|loop|callgrind|all] [--rounds 3] [--seconds 5]
                               [--workload interleaved|elephants] [--acks per-packet|coalesced]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "vdev"))
import lapstest  # noqa: E402

NULL_VDEVS = ["--vdev", "net_null0,copy=1,size=1024", "--vdev", "net_null1,size=1024"]


def laps_config(path, mode, stop, tmp, acks="per-packet"):
    if mode == "null":
        with open(os.path.join(ROOT, "configs", "app-null.yaml")) as f:
            text = f.read()
        text = re.sub(r"(?m)^stats: .*$", "", text)
        text = re.sub(r"(?m)^run: .*$", f"run: {stop}", text)
    else:
        # Under callgrind the loop runs some 50 times slower against the real
        # clock, and the paths' 2 x realVal timeouts fire on packets that are
        # only waiting in the ring: the binary resent every frame about 25
        # times, which is not the work of a host frame. The callgrind loop
        # ("cgloop") waits 200 ms before a resend.
        text = lapstest.loop_config(f"net_pcap0,rx_pcap={tmp}/loop.pcap,infinite_rx=1", 1, stop,
                                    timeout_us=200000 if mode == "cgloop" else None)
        # --acks coalesced: the loop's receiver answers each (flow, path) run
        # of a burst with one ACK_RUN (docs/wire-format.md).
        text += f"engine: {{acks: {acks}}}\n"
    with open(path, "w") as f:
        f.write(text)


def run_laps(laps, mode, stop, tmp, wrapper=(), acks="per-packet"):
    cfg = os.path.join(tmp, f"laps-{mode}.yaml")
    laps_config(cfg, mode, stop, tmp, acks)
    return lapstest.report_of_run(lapstest.laps_command(laps, cfg, "laps", wrapper=wrapper, kind="bench"))


def run_testpmd(testpmd, vdevs, seconds, wrapper=(), ready_timeout=600):
    """testpmd io, non-interactive: forwarding starts at 'Press enter to exit'."""
    # testpmd block-buffers stdout into a pipe: unbuffer it to see the prompt.
    cmd = ["stdbuf", "-o0"] + list(wrapper) + [testpmd] + lapstest.eal_args("testpmd", kind="bench") + vdevs + [
        "--", "--forward-mode=io", "--nb-cores=1", "--total-num-mbufs=16384"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    # The prompt has no newline: read raw chunks until it shows.
    seen = b""
    deadline = time.monotonic() + ready_timeout
    while b"Press enter to exit" not in seen:
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk or time.monotonic() > deadline:
            p.kill()
            p.wait()
            sys.exit("testpmd did not start forwarding:\n" + seen.decode(errors="replace")[-3000:])
        seen += chunk
    start = time.monotonic()
    time.sleep(seconds)
    p.stdin.write(b"\n")
    p.stdin.flush()
    elapsed = time.monotonic() - start
    rest, _ = p.communicate(timeout=600)
    out = (seen + rest).decode(errors="replace")
    m = re.search(r"Accumulated forward statistics for all ports\+*\s*RX-packets:\s*(\d+)", out)
    if p.returncode != 0 or m is None:
        sys.exit(f"testpmd failed ({p.returncode}):\n{out[-3000:]}")
    return int(m.group(1)), elapsed, out


def loop_vdevs(tmp):
    return ["--vdev", f"net_pcap0,rx_pcap={tmp}/loop.pcap,infinite_rx=1", "--vdev", "net_ring0"]


def throughput(args, mode, tmp):
    print(f"== {mode}: {args.rounds} rounds of {args.seconds} s, laps and testpmd io alternately")
    laps_rates, tp_rates = [], []
    for r in range(args.rounds):
        rep, _ = run_laps(args.laps, mode, f"{{duration_ms: {int(args.seconds * 1000)}}}", tmp, acks=args.acks)
        if mode == "null":
            rate = rep["laps.run.received_packets"] / rep["laps.run.seconds"]
        else:
            rate = rep["laps.engine.host_rx"] / rep["laps.run.seconds"]
        laps_rates.append(rate / rep["laps.run.workers"])
        vdevs = NULL_VDEVS if mode == "null" else loop_vdevs(tmp)
        packets, elapsed, _ = run_testpmd(args.testpmd, vdevs, args.seconds)
        tp_rates.append(packets / elapsed)
        print(f"round {r + 1}: laps {laps_rates[-1] / 1e6:.2f} Mpps/worker, testpmd io {tp_rates[-1] / 1e6:.2f} "
              f"Mpps/forwarding lcore", flush=True)
    lb, tb = max(laps_rates), max(tp_rates)
    what = "packets received (both ports)" if mode == "null" else "host frames through the full LAPS loop"
    # testpmd may forward nothing (a vdev it could not drive): say so, no ratio.
    ratio = f"ratio {lb / tb:.2f}" if tb > 0 else "no ratio: testpmd io forwarded no packets"
    print(f"{mode}: laps best {lb / 1e6:.2f} Mpps/worker ({what}), testpmd io best {tb / 1e6:.2f} Mpps, {ratio}")
    return lb, tb


def total_ir(path):
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise ValueError(f"{path}: no totals line")


def inclusive_ir(path, function):
    """Inclusive instructions of `function` (and what it calls) in a callgrind file."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path], capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        if function in line:
            return int(line.split()[0].replace(",", ""))
    return None


CALLGRIND = ["valgrind", "--tool=callgrind", "--fair-sched=yes"]


def callgrind_runs(args, tmp):
    print("== callgrind: instructions per packet at two run lengths (start-up cancels out)")
    rows = []
    for mode, n1, n2, unit in (("null", 100000, 300000, "packet received"),
                               ("cgloop", 50000, 150000, "host frame (DATA out+in, ACK out+in, delivery)")):
        points = []
        for n in (n1, n2):
            out = os.path.join(tmp, f"cg-laps-{mode}-{n}.out")
            rep, _ = run_laps(args.laps, mode, f"{{max_packets: {n}}}", tmp,
                              CALLGRIND + [f"--callgrind-out-file={out}"], acks=args.acks)
            count = rep["laps.run.received_packets"] if mode == "null" else rep["laps.engine.host_rx"]
            points.append((total_ir(out), count, inclusive_ir(out, "laps::app::worker::run()")))
            print(f"  laps {mode} max_packets {n}: {points[-1][0]} Ir, {count} packets, worker loop "
                  f"{points[-1][2]} Ir", flush=True)
        ipp = (points[1][0] - points[0][0]) / (points[1][1] - points[0][1])
        loop = points[1][2] / points[1][1] if points[1][2] else float("nan")
        rows.append((f"laps {mode}", ipp, unit))
        print(f"laps {mode}: {ipp:.0f} instructions per {unit} (two lengths); worker loop alone {loop:.0f}",
              flush=True)
        if mode == "cgloop":
            print(f"  (resent: {rep.get('laps.engine.data_resent', 0)} in the longer run)", flush=True)
    points = []
    for seconds in (20, 40):
        out = os.path.join(tmp, f"cg-testpmd-{seconds}.out")
        packets, _, _ = run_testpmd(args.testpmd, NULL_VDEVS, seconds,
                                    CALLGRIND + [f"--callgrind-out-file={out}"])
        points.append((total_ir(out), packets))
        print(f"  testpmd {seconds} s: {points[-1][0]} Ir, {packets} packets", flush=True)
    ipp = (points[1][0] - points[0][0]) / (points[1][1] - points[0][1])
    rows.append(("testpmd io null", ipp, "packet received"))
    print(f"testpmd io null: {ipp:.0f} instructions per packet received", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--laps", required=True)
    ap.add_argument("--testpmd", default="dpdk-testpmd")
    ap.add_argument("--mode", default="all", choices=["null", "loop", "callgrind", "all"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--workload", default="interleaved", choices=["interleaved", "elephants"])
    ap.add_argument("--acks", default="per-packet", choices=["per-packet", "coalesced"],
                    help="the loop's receiver: one ACK per DATA, or one ACK_RUN per (flow, path) run of a burst")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        flows = lapstest.traffic(udp_flows=8, udp_packets=32 if args.workload == "elephants" else 16, roce_qps=0,
                                 roce_packets=0, size=982)
        if args.workload == "elephants":
            flows.sort(key=lambda fr: fr[0])  # stable: each flow's 32 frames in a row, in order
        frames = [f for _, f in flows]
        lapstest.write_pcap(f"{tmp}/loop.pcap", frames)  # 1024-byte frames, 8 flows
        if args.mode in ("null", "all"):
            throughput(args, "null", tmp)
        if args.mode in ("loop", "all"):
            throughput(args, "loop", tmp)
        if args.mode in ("callgrind", "all"):
            callgrind_runs(args, tmp)


if __name__ == "__main__":
    main()
