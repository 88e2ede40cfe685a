#!/usr/bin/env python3
"""iperf3 TCP through laps (tools/tap-pair) against dpdk-testpmd io forwarding
between two TAP interfaces, alternately, in one run (docs/PERFORMANCE.md §6).

Both set-ups are two Linux hosts in network namespaces, each with one TAP
interface that a DPDK process owns:
  testpmd  dpdk-testpmd --forward-mode=io, lcores 0-1 (main 0, forwarding 1),
           net_tap0 <-> net_tap1; namespaces tp-a 10.0.0.1, tp-b 10.0.0.2;
           MTU 1500 (the TAP default).
  laps     tools/tap-pair up with configs/app-tap-pair.yaml: lcores
           0@0 (control), 1@1 (worker a), 2@1 (worker b), 3@0 (link), so four
           lcores on the same two cores; namespaces laps-a, laps-b; MTU as
           laps sets it (1414: 1500 - 86 of LAPS encapsulation).
iperf3 runs its server in the b namespace and its client in a, for --seconds,
and reports the receiver's rate and the sender's TCP retransmissions. Each
round runs testpmd then laps; the ratio is laps / testpmd of the same round.
Needs root; iperf3 (tools/setup installs it).

usage: bench/app/tap_pair_iperf.py [--laps build/app/laps] [--rounds 3] [--seconds 10] [--lcores MAP]
                                  [--config FILE] [--json FILE]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sh(*cmd, check=True, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip() or r.stdout.strip()}")
    return r


def place(ns, iface, mac, addr, peer, peer_mac):
    sh("ip", "netns", "add", ns)
    sh("ip", "link", "set", iface, "netns", ns)
    sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "-n", ns, "link", "set", iface, "address", mac)
    sh("ip", "-n", ns, "link", "set", iface, "txqueuelen", "10000")  # as tools/tap-pair does
    sh("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", iface)
    sh("ip", "-n", ns, "link", "set", iface, "up")
    sh("ip", "-n", ns, "neigh", "replace", peer, "lladdr", peer_mac, "dev", iface, "nud", "permanent")


def iperf(ns_a, ns_b, seconds):
    """One iperf3 run, a to b; the server serves this one client."""
    server = subprocess.Popen(["ip", "netns", "exec", ns_b, "iperf3", "-s", "-1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):  # until the server listens
            if "5201" in sh("ip", "netns", "exec", ns_b, "ss", "-ltn", check=False).stdout:
                break
            time.sleep(0.1)
        out = sh("ip", "netns", "exec", ns_a, "iperf3", "-c", "10.0.0.2", "-t", str(seconds), "-J",
                 timeout=seconds + 30).stdout
    finally:
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.terminate()
            server.wait()
    end = json.loads(out)["end"]
    return {"mbit_s": end["sum_received"]["bits_per_second"] / 1e6,
            "retransmits": end["sum_sent"].get("retransmits", 0)}


def run_testpmd(seconds, tmp):
    prefix = f"laps-bench-tap-{os.getpid()}"
    cmd = ["dpdk-testpmd", "-l", "0,1", "--no-huge", "-m", "512", "--no-pci", "--no-shconf", "--file-prefix", prefix,
           "--log-level=lib.eal:error", "--vdev", "net_tap0,iface=tpa", "--vdev", "net_tap1,iface=tpb", "--",
           "--forward-mode=io", "--auto-start", "--total-num-mbufs=16384"]
    log = open(f"{tmp}/testpmd.log", "w")
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(300):  # ports started and forwarding: the TAPs may move
            if "Press enter to exit" in open(f"{tmp}/testpmd.log").read() or p.poll() is not None:
                break
            time.sleep(0.1)
        if p.poll() is not None:
            raise RuntimeError("testpmd exited at start:\n" + open(f"{tmp}/testpmd.log").read())
        place("tp-a", "tpa", "02:00:00:00:0a:01", "10.0.0.1", "10.0.0.2", "02:00:00:00:0b:01")
        place("tp-b", "tpb", "02:00:00:00:0b:01", "10.0.0.2", "10.0.0.1", "02:00:00:00:0a:01")
        return iperf("tp-a", "tp-b", seconds)
    finally:
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        for ns in ("tp-a", "tp-b"):
            sh("ip", "netns", "del", ns, check=False)


def run_laps(laps, seconds, lcores, config):
    env = dict(os.environ, LAPS=laps)
    tool = os.path.join(ROOT, "tools", "tap-pair")
    sh(tool, "up", *(["--lcores", lcores] if lcores else []), *(["--config", config] if config else []), env=env)
    try:
        return iperf("laps-a", "laps-b", seconds)
    finally:
        sh(tool, "down", env=env, check=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--laps", default=os.path.join(ROOT, "build", "app", "laps"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--lcores", help="laps's EAL lcore map (default: tools/tap-pair's)")
    ap.add_argument("--config", help="laps's config (default: tools/tap-pair's, configs/app-tap-pair.yaml)")
    ap.add_argument("--json")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("tap_pair_iperf.py: needs root (network namespaces, TAP)")
    for tool in ("iperf3", "dpdk-testpmd", "ip"):
        if shutil.which(tool) is None:
            sys.exit(f"tap_pair_iperf.py: {tool} not found (tools/setup installs it)")
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            t = run_testpmd(args.seconds, tmp)
            l = run_laps(args.laps, args.seconds, args.lcores, args.config and os.path.abspath(args.config))
            ratio = l["mbit_s"] / t["mbit_s"] if t["mbit_s"] > 0 else 0.0
            rounds.append({"testpmd": t, "laps": l, "ratio": ratio})
            print(f"round {r + 1}: testpmd io {t['mbit_s']:.0f} Mbit/s ({t['retransmits']} retransmits), "
                  f"laps {l['mbit_s']:.0f} Mbit/s ({l['retransmits']} retransmits): {ratio:.2f} x", flush=True)
    ratios = [r["ratio"] for r in rounds]
    print(f"median ratio {statistics.median(ratios):.2f} x (min {min(ratios):.2f}, max {max(ratios):.2f}); "
          f"laps retransmits {sum(r['laps']['retransmits'] for r in rounds)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seconds": args.seconds, "rounds": rounds}, f, indent=1)


if __name__ == "__main__":
    main()
