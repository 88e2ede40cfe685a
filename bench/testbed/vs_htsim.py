#!/usr/bin/env python3
"""laps-testbed against htsim (github.com/Broadcom/csg-htsim) on the same fabric and traffic:
DATA packets per wall-clock second, peak memory and FCTs, side by side.

The fabric: a 2-tier leaf-spine, 8 leaves x 8 spines x 8 hosts per leaf (64 hosts), every
link 100 Gb/s with 1 us of propagation delay, no switch latency. The traffic: the 63 -> 1
in-cast, hosts 1..63 each send one flow of SIZE bytes to host 0, all at t = 0 (hosts 1..7
share host 0's leaf). Each size is run by

  laps        laps-testbed --scheme laps: the LAPS engine on a DropTail fabric
              (150 KB per switch port, 32 MB per switch, the testbed's defaults)
  roce        laps-testbed --scheme ecmp: the testbed's RoCEv2 NIC model, one path per flow
              by ECMP. With --roce-fabric htsim (the default) as htsim_roce models RoCE: a
              lossless (PFC) fabric, XOFF at 100 KB per ingress, Go-Back-N, and no ECN marks,
              so DCQCN never cuts the line rate (htsim_roce has no congestion control). With
              --roce-fabric testbed: the scenario's defaults (DropTail, IRN, DCQCN with RED).
  htsim_roce  HTSIM/sim/datacenter/htsim_roce: lossless_input queues (PFC) with the same
              XOFF/XON, -strat ecmp_host (one path per flow), line rate, Go-Back-N
  htsim_ndp   HTSIM/sim/datacenter/htsim_ndp: composite queues (NDP trimming), -strat ecmp_host
              spraying over -paths entropies, initial window one BDP

with the same packet payload everywhere: the testbed's host frames are 1024 bytes
(frame_bytes) and carry 982 payload bytes, so htsim runs with -mtu 982 and every system sends
ceil(SIZE / 982) first transmissions per flow. Queues: the testbed's 150,000-byte DropTail
limit is htsim_ndp's -q 153 packets (150,246 bytes, where it trims); on the lossless fabrics
data queues never drop, the switch buffer (32 MB) bounds them, so htsim_roce gets -q 32587
(htsim only warns above it). htsim gets the leaf-spine as a FatTree -topo file (2 tiers, one
pod of 64 hosts, ToR radix 8 down / 8 up, 8 spines of radix 8 down).

Each system runs ROUNDS times per size, one process at a time, pinned to one core
(sched_setaffinity, as `taskset -c CORE`); the order is round-robin over the systems so a
load change on a shared machine hits every system alike. For each run:

  DATA packets   what the senders put on the wire, resends included. laps: the engines'
                 data_sent + data_resent (summary.json "engines"); roce: the NICs' data_sent
                 (resends included, summary.json "roce"). htsim_ndp prints "New: N Rtx: R"
                 (packets): N + R. htsim_roce prints "New: 0 Rtx: B" at the htsim commit this
                 was written against (its new-packet counter is never incremented, and Rtx
                 counts Go-Back-N rewound bytes): ceil(size / mtu) per flow + B / mtu.
  wall s         the process's wall time, start to exit (EAL start-up and topology building
                 included; htsim runs until -end, so its -end is set to --htsim-end-x times the
                 in-cast's ideal time + 1 ms, and its idle tail costs only its timers).
  peak RSS       the child's ru_maxrss (os.wait4); the table shows the largest over the rounds.
  FCT            per flow, last byte (testbed: delivered; htsim: acknowledged at the sender,
                 its "finished at" line) minus the flow's start (0); last = the largest, p99
                 nearest-rank (of 63 flows: the largest). Medians over the rounds: the testbed
                 is deterministic, htsim_roce is not (RoceSrc seeds rand() with time(NULL)).
  wall, rate     medians over the rounds; the rate's min-max beside it.
  CPU s          the child's user + system time (os.wait4), and DATA packets per CPU second:
                 on a shared machine the wall time also counts other processes' turns on the
                 core, the CPU time does not (their cache traffic still shows).

It builds nothing: point --htsim at a checkout built as docs/testbed.md says, and --testbed at a
built laps-testbed.

  bench/testbed/vs_htsim.py --htsim ~/htsim [--testbed build/fabric/laps-testbed]
      [--sizes-mib 8,64] [--rounds 3] [--core 1] [--systems laps,roce,htsim_roce,htsim_ndp]
      [--keep DIR] [--json FILE]

Exit status: 0 when every run exited 0 and completed every flow; 1 when a run failed or left
flows unfinished (the tables are still printed); 2 for bad arguments or missing binaries.
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The fabric and traffic, shared by every system.
LEAVES, SPINES, HOSTS_PER_LEAF = 8, 8, 8
HOSTS = LEAVES * HOSTS_PER_LEAF
RATE_GBPS = 100
LINK_DELAY_NS = 1000          # laps-testbed's leaf_spine default (host and uplink), htsim's Downlink_Latency_ns
FRAME_BYTES = 1024            # laps-testbed fabric.frame_bytes (the default)
PAYLOAD_BYTES = FRAME_BYTES - 42  # payload per host frame (Ethernet + IPv4 + UDP headers off): htsim -mtu
QUEUE_BYTES = 150000          # laps-testbed fabric.port_queue_bytes (the default, paper §IV-A)
PFC_XOFF_BYTES = 100000       # laps-testbed fabric.pfc_xoff_bytes (the default); xon = xoff - 2 packets
SHARED_BUFFER_BYTES = 32000000  # laps-testbed fabric.shared_buffer_bytes (the default): what bounds a PFC data queue
HTSIM_ACK_BYTES = 64          # htsim's RocePacket::ACKSIZE, added to -mtu on the wire
RECEIVER = 0
SENDERS = list(range(1, HOSTS))

ALL_SYSTEMS = ("laps", "roce", "htsim_roce", "htsim_ndp")
TESTBED_SYSTEMS = ("laps", "roce")
HTSIM_SYSTEMS = ("htsim_roce", "htsim_ndp")


def fail(message, status=2):
    print(f"vs_htsim: {message}", file=sys.stderr)
    sys.exit(status)


# ---------------------------------------------------------------- inputs

def frames_per_flow(size):
    return -(-size // PAYLOAD_BYTES)


def ideal_incast_us(size):
    """The in-cast's bound: every sender's frames through host 0's one 100 Gb/s link, at the
    largest per-packet wire size of the four systems (LAPS: frame + 86 header bytes)."""
    wire = FRAME_BYTES + 86
    return len(SENDERS) * frames_per_flow(size) * wire * 8 / (RATE_GBPS * 1e3)


def testbed_scenario(system, size, roce_fabric):
    max_time_us = max(2_000_000, int(10 * ideal_incast_us(size)))
    lines = [
        "version: 1",
        f"name: vs_htsim_{system}_{size}",
        f'description: "63 -> 1 in-cast of {size} bytes per sender, leaf-spine 8 x 8 x 8 at 100 Gb/s '
        '(bench/testbed/vs_htsim.py)"',
        f"topology: 'leaf_spine:leaves={LEAVES},spines={SPINES},hosts_per_leaf={HOSTS_PER_LEAF},"
        f"host_rate_gbps={RATE_GBPS},uplink_rate_gbps={RATE_GBPS},"
        f"host_delay_ns={LINK_DELAY_NS},uplink_delay_ns={LINK_DELAY_NS}'",
        "seed: 1",
        "scale: 1",
        f"scheme: {'laps' if system == 'laps' else 'ecmp'}",
    ]
    fabric = [f"port_queue_bytes: {QUEUE_BYTES}", f"frame_bytes: {FRAME_BYTES}"]
    if system == "roce" and roce_fabric == "htsim":
        fabric += ["pfc: true", f"pfc_xoff_bytes: {PFC_XOFF_BYTES}", "ecn: off"]
    lines.append("fabric: {" + ", ".join(fabric) + "}")
    lines.append(f"run: {{max_time_us: {max_time_us}}}")
    lines.append("traffic:")
    lines.append("  - flows:")
    for s in SENDERS:
        lines.append(f"      - {{src: {s}, dst: {RECEIVER}, bytes: {size}, start_us: 0}}")
    return "\n".join(lines) + "\n"


def htsim_topology():
    """The leaf-spine as htsim's FatTreeTopology::load() reads it: 2 tiers, one pod of all
    hosts; tier 0 (ToR = leaf) 8 hosts down and 8 uplinks; tier 1 (spine) one link down to each
    leaf. Queue sizes come from -q (the loader refuses Queue_Up/Queue_Down next to -q)."""
    return "\n".join([
        "# bench/testbed/vs_htsim.py: leaf-spine 8 leaves x 8 spines x 8 hosts per leaf",
        f"Nodes {HOSTS}",
        "Tiers 2",
        f"Podsize {HOSTS}",
        "",
        "Tier 0",
        f"Downlink_speed_Gbps {RATE_GBPS}",
        f"Radix_Down {HOSTS_PER_LEAF}",
        f"Radix_Up {SPINES}",
        f"Downlink_Latency_ns {LINK_DELAY_NS}",
        "Switch_Latency_ns 0",
        "",
        "Tier 1",
        f"Downlink_speed_Gbps {RATE_GBPS}",
        f"Radix_Down {LEAVES}",
        f"Downlink_Latency_ns {LINK_DELAY_NS}",
        "Switch_Latency_ns 0",
        "",
    ])


def htsim_matrix(size):
    lines = [f"Nodes {HOSTS}", f"Connections {len(SENDERS)}"]
    for i, s in enumerate(SENDERS):
        lines.append(f"{s}->{RECEIVER} id {i + 1} start 0 size {size}")
    return "\n".join(lines) + "\n"


def htsim_bdp_packets():
    """NDP's initial window: one round trip host-leaf-spine-leaf-host and back (8 links of
    LINK_DELAY_NS, a DATA store-and-forward on each of 4 links out, an ACK on 4 back) at line
    rate, in packets."""
    wire = PAYLOAD_BYTES + HTSIM_ACK_BYTES
    rtt_ns = 8 * LINK_DELAY_NS + 4 * (wire + HTSIM_ACK_BYTES) * 8 / RATE_GBPS
    return math.ceil(rtt_ns * RATE_GBPS / 8 / wire)


def htsim_args(system, size, args):
    end_us = int(args.htsim_end_x * ideal_incast_us(size) + 1000)
    common = ["-topo", "topo.txt", "-tm", "incast.cm", "-nodes", str(HOSTS),
              "-linkspeed", str(RATE_GBPS * 1000), "-mtu", str(PAYLOAD_BYTES),
              "-end", str(end_us), "-seed", "1", "-o", "logout.dat"]
    if system == "htsim_roce":
        # Lossless queues never drop; -q is only the size above which htsim prints "LOSSLESS not
        # working!" for every packet (a flushed line each, which would bill htsim for its own
        # warnings). As in the testbed under PFC, the switch buffer bounds them.
        high = math.ceil(PFC_XOFF_BYTES / PAYLOAD_BYTES)
        return common + ["-q", str(math.ceil(SHARED_BUFFER_BYTES / PAYLOAD_BYTES)),
                         "-queue_type", "lossless_input", "-pfc_thresholds", str(high - 2), str(high),
                         "-strat", "ecmp_host", "-paths", "256"]
    return common + ["-q", str(round(QUEUE_BYTES / PAYLOAD_BYTES)),
                     "-queue_type", "composite", "-strat", "ecmp_host", "-paths", str(args.ndp_paths),
                     "-cwnd", str(args.ndp_cwnd or htsim_bdp_packets())]


# ---------------------------------------------------------------- running

def run_pinned(argv, cwd, core, stdout_path, stderr_path):
    """Runs argv in cwd on one core; returns (exit status, wall s, CPU s, peak RSS in KiB)."""
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        start = time.monotonic()
        child = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                 preexec_fn=lambda: os.sched_setaffinity(0, {core}))
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - start
        child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def fct_stats(fcts_ns):
    if not fcts_ns:
        return {"last_ms": None, "mean_ms": None, "p99_ms": None}
    ordered = sorted(fcts_ns)
    p99 = ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)]  # nearest rank, as the testbed
    return {"last_ms": ordered[-1] / 1e6, "mean_ms": statistics.fmean(ordered) / 1e6, "p99_ms": p99 / 1e6}


def parse_testbed(system, outdir):
    with open(os.path.join(outdir, "summary.json")) as f:
        summary = json.load(f)
    if system == "laps":
        engines = summary["engines"]
        data = engines["data_sent"] + engines["data_resent"]
        resent = engines["data_resent"]
    else:
        roce = summary["roce"]
        data = roce["data_sent"]          # the NIC counts resends in data_sent too
        resent = roce["data_resent"]
    on_paths = sum(c["packets"] for c in summary.get("path_classes", []))
    fcts, done = [], 0
    with open(os.path.join(outdir, "flows.csv")) as f:
        header = f.readline().strip().split(",")
        col = {name: i for i, name in enumerate(header)}
        total = 0
        for line in f:
            row = line.strip().split(",")
            if len(row) < len(header):
                continue
            total += 1
            if row[col["completed"]] in ("1", "true", "yes"):
                done += 1
                fcts.append(int(row[col["fct_ns"]]))
    note = ""
    if on_paths and on_paths != data:
        note = f"path_classes count {on_paths} DATA packets"
    return {"data": data, "resent": resent, "flows": total, "done": done, "fcts_ns": fcts, "note": note}


FINISH = re.compile(r"^Flow (\S+) .*finished at ([0-9.eE+-]+) total bytes (\d+)")
TOTALS = re.compile(r"^New: (\d+) Rtx: (\d+)")


def parse_htsim(system, stdout_path, size):
    fcts, new, rtx = {}, None, None
    with open(stdout_path, errors="replace") as f:
        for line in f:
            line = line.lstrip(".|")  # the clock's progress dots share lines with the output
            m = FINISH.match(line)
            if m:
                fcts.setdefault(m.group(1), float(m.group(2)) * 1e3)  # us -> ns; start is 0
                continue
            m = TOTALS.match(line)
            if m:
                new, rtx = int(m.group(1)), int(m.group(2))
    if new is None:
        return {"data": None, "resent": None, "flows": len(SENDERS), "done": len(fcts),
                "fcts_ns": list(fcts.values()), "note": "no 'New: N Rtx: R' line (crashed?)"}
    note = ""
    if system == "htsim_ndp":
        data, resent = new + rtx, rtx
    else:
        # htsim_roce: _new_packets_sent is never incremented and _rtx_packets_sent adds the
        # bytes each Go-Back-N rewinds (_highest_sent - _last_acked), resent in mtu packets.
        resent = -(-rtx // PAYLOAD_BYTES)
        first = new if new > 0 else len(SENDERS) * frames_per_flow(size)
        data = first + resent
        note = "DATA computed: ceil(size/mtu) per flow + Rtx bytes / mtu"
    return {"data": data, "resent": resent, "flows": len(SENDERS), "done": len(fcts),
            "fcts_ns": list(fcts.values()), "note": note}


# ---------------------------------------------------------------- report

def fmt(v, spec, none="-"):
    return none if v is None else format(v, spec)


def report(size, systems, results):
    mib = size / (1 << 20)
    print()
    print(f"63 -> 1 in-cast, {mib:g} MiB per sender ({len(SENDERS) * frames_per_flow(size):,} first "
          f"transmissions of {PAYLOAD_BYTES} B payload), leaf-spine 8 x 8 x 8 at {RATE_GBPS} Gb/s, "
          f"ideal {ideal_incast_us(size) / 1e3:.2f} ms (LAPS wire size)")
    cols = ["system", "DATA pkts", "resent", "wall s", "DATA pkts / wall s (min-max)", "x htsim_roce", "CPU s",
            "DATA pkts / CPU s", "x htsim_roce (CPU)", "peak RSS MiB", "last FCT ms", "mean FCT ms", "p99 FCT ms",
            "flows done"]
    rows = []
    summary = {}
    for system in systems:
        runs = results[system]
        ok = [r for r in runs if r["rc"] == 0 and r["data"] is not None]
        walls = [r["wall"] for r in runs]
        rates = [r["data"] / r["wall"] for r in ok]
        cpu_rates = [r["data"] / r["cpu"] for r in ok if r["cpu"] > 0]
        datas = sorted({r["data"] for r in ok})
        first = ok[0] if ok else runs[0]
        # FCTs: the median over the rounds of each statistic (the testbed's runs are
        # deterministic; htsim_roce's are not: RoceSrc seeds rand() with time(NULL)).
        per_round = [fct_stats(r["fcts_ns"]) for r in (ok or runs)]
        fct = {k: (statistics.median([p[k] for p in per_round if p[k] is not None])
                   if any(p[k] is not None for p in per_round) else None) for k in per_round[0]}
        fct_varies = len({tuple(sorted(r["fcts_ns"])) for r in (ok or runs)}) > 1
        s = {
            "data": statistics.median([r["data"] for r in ok]) if ok else None,
            "data_varies": len(datas) > 1,
            "fct_varies": fct_varies,
            "resent": first.get("resent"),
            "wall_s": statistics.median(walls),
            "cpu_s": statistics.median([r["cpu"] for r in runs]),
            "cpu_rate": statistics.median(cpu_rates) if cpu_rates else None,
            "rate": statistics.median(rates) if rates else None,
            "rate_min": min(rates) if rates else None,
            "rate_max": max(rates) if rates else None,
            "rss_mib": max(r["rss_kib"] for r in runs) / 1024,
            "done": first["done"], "flows": first["flows"],
            "rounds": len(runs), "failed": len(runs) - len(ok),
            "notes": sorted({r["note"] for r in runs if r["note"]}),
            **fct,
        }
        summary[system] = s
    base = summary.get("htsim_roce", {}).get("rate")
    cpu_base = summary.get("htsim_roce", {}).get("cpu_rate")
    for system in systems:
        s = summary[system]
        rate = "-" if s["rate"] is None else (f"{s['rate'] / 1e6:.3f} M ({s['rate_min'] / 1e6:.3f}-"
                                              f"{s['rate_max'] / 1e6:.3f})")
        ratio = f"{s['rate'] / base:.2f}" if base and s["rate"] else "-"
        s["x_htsim_roce"] = (s["rate"] / base) if base and s["rate"] else None
        s["x_htsim_roce_cpu"] = (s["cpu_rate"] / cpu_base) if cpu_base and s["cpu_rate"] else None
        rows.append([system, fmt(s["data"], ",.0f") + ("*" if s["data_varies"] else ""),
                     fmt(s["resent"], ","), f"{s['wall_s']:.2f}", rate, ratio, f"{s['cpu_s']:.2f}",
                     "-" if s["cpu_rate"] is None else f"{s['cpu_rate'] / 1e6:.3f} M",
                     fmt(s["x_htsim_roce_cpu"], ".2f"), f"{s['rss_mib']:.1f}",
                     fmt(s["last_ms"], ".3f"), fmt(s["mean_ms"], ".3f"), fmt(s["p99_ms"], ".3f"),
                     f"{s['done']}/{s['flows']}" + (f" ({s['failed']} runs failed)" if s["failed"] else "")])
    widths = [max(len(str(r[i])) for r in rows + [cols]) for i in range(len(cols))]
    print("| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")
    for system in systems:
        for n in summary[system]["notes"]:
            print(f"  {system}: {n}")
        if summary[system]["data_varies"]:
            print(f"  {system}: * DATA packets differ between rounds (median shown)")
        if summary[system]["fct_varies"]:
            print(f"  {system}: FCTs differ between rounds (medians over the rounds shown)")
    return summary


def find_htsim(directory, wanted):
    """The folder of the wanted htsim binaries: a checkout's sim/datacenter/, or the folder
    given as its sim/ or sim/datacenter/."""
    candidates = [os.path.join(directory, "sim", "datacenter"), os.path.join(directory, "datacenter"), directory]
    for c in candidates:
        if all(os.access(os.path.join(c, b), os.X_OK) for b in wanted):
            return c
    return None


def describe_commit(directory):
    try:
        out = subprocess.run(["git", "-C", directory, "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        return out.stdout.strip() if out.returncode == 0 else "unknown (not a git checkout)"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--htsim", required=True, metavar="DIR",
                    help="an htsim checkout (github.com/Broadcom/csg-htsim) with sim/datacenter/htsim_roce and "
                         "htsim_ndp built (docs/testbed.md)")
    ap.add_argument("--testbed", default=os.path.join(ROOT, "build", "fabric", "laps-testbed"), metavar="PATH",
                    help="the laps-testbed binary (default build/fabric/laps-testbed)")
    ap.add_argument("--sizes-mib", default="8,64", help="bytes per sender in MiB, comma-separated (default 8,64)")
    ap.add_argument("--rounds", type=int, default=3, help="runs per system and size (default 3)")
    ap.add_argument("--core", type=int, default=1, help="the core every run is pinned to (default 1)")
    ap.add_argument("--systems", default=",".join(ALL_SYSTEMS),
                    help="comma-separated, of " + ", ".join(ALL_SYSTEMS) + " (default all)")
    ap.add_argument("--roce-fabric", choices=("htsim", "testbed"), default="htsim",
                    help="roce's fabric: htsim = PFC, no ECN marks, as htsim_roce (default); "
                         "testbed = the scenario defaults (DropTail, IRN, DCQCN)")
    ap.add_argument("--htsim-end-x", type=float, default=3.0,
                    help="htsim's -end: this many ideal in-cast times + 1 ms (default 3)")
    ap.add_argument("--ndp-cwnd", type=int, default=0, help="htsim_ndp -cwnd in packets (default: one BDP)")
    ap.add_argument("--ndp-paths", type=int, default=256, help="htsim_ndp -paths, entropies sprayed over (default 256)")
    ap.add_argument("--keep", metavar="DIR", help="write inputs and outputs here and keep them (default: a temporary "
                                                   "directory, removed)")
    ap.add_argument("--json", metavar="FILE", help="also write the tables as JSON")
    args = ap.parse_args()

    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for s in systems:
        if s not in ALL_SYSTEMS:
            fail(f"--systems: unknown system '{s}' (known: {', '.join(ALL_SYSTEMS)})")
    try:
        sizes = [int(float(x) * (1 << 20)) for x in args.sizes_mib.split(",") if x.strip()]
    except ValueError:
        fail(f"--sizes-mib: expected numbers, got '{args.sizes_mib}'")
    if not sizes or any(s <= 0 or s >= 2**31 for s in sizes):
        fail("--sizes-mib: sizes must be > 0 and < 2048 MiB (htsim reads sizes as int)")
    if args.rounds < 1:
        fail("--rounds must be >= 1")
    if args.core not in os.sched_getaffinity(0):
        fail(f"--core {args.core}: not one of this process's cores {sorted(os.sched_getaffinity(0))}")

    htsim_dir = os.path.abspath(os.path.expanduser(args.htsim))
    bindir = None
    if any(s in HTSIM_SYSTEMS for s in systems):
        if not os.path.isdir(htsim_dir):
            fail(f"--htsim {htsim_dir}: no such directory. Fetch and build htsim as docs/testbed.md says:\n"
                 f"  git clone https://github.com/Broadcom/csg-htsim {htsim_dir}\n"
                 f"  cd {htsim_dir}/sim && make -j2 libhtsim.a && make -j2 -C datacenter htsim_roce htsim_ndp")
        wanted = [s for s in HTSIM_SYSTEMS if s in systems]
        bindir = find_htsim(htsim_dir, wanted)
        if bindir is None:
            expected = "\n".join(f"  {os.path.join(htsim_dir, 'sim', 'datacenter', b)}" for b in wanted)
            fail(f"--htsim {htsim_dir}: htsim is not built; expected the executables\n{expected}\n"
                 f"This script builds nothing. Build them (docs/testbed.md):\n"
                 f"  cd {htsim_dir}/sim && make -j2 libhtsim.a && make -j2 -C datacenter htsim_roce htsim_ndp")
    testbed = os.path.abspath(args.testbed)
    if any(s in TESTBED_SYSTEMS for s in systems) and not os.access(testbed, os.X_OK):
        fail(f"--testbed {testbed}: not an executable. Build it: ninja -C build fabric/laps-testbed "
             "(or pass --testbed build-dev/fabric/laps-testbed)")

    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        workdir, tmp = os.path.abspath(args.keep), None
    else:
        tmp = tempfile.TemporaryDirectory(prefix="vs_htsim-")
        workdir = tmp.name

    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    except OSError:
        pass
    print(f"machine: {cpu}, {os.cpu_count()} cores, runs pinned to core {args.core}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if any(s in TESTBED_SYSTEMS for s in systems):
        print(f"laps-testbed: {testbed}; roce fabric: {args.roce_fabric}")
    if bindir:
        print(f"htsim: {bindir} (commit {describe_commit(htsim_dir)}); -mtu {PAYLOAD_BYTES}; roce -q "
              f"{math.ceil(SHARED_BUFFER_BYTES / PAYLOAD_BYTES)}; ndp -q {round(QUEUE_BYTES / PAYLOAD_BYTES)} "
              f"-cwnd {args.ndp_cwnd or htsim_bdp_packets()} -paths {args.ndp_paths}")
    print(f"work directory: {workdir}" + ("" if args.keep else " (removed at the end; --keep DIR keeps it)"))

    status = 0
    everything = {"core": args.core, "rounds": args.rounds, "roce_fabric": args.roce_fabric, "sizes": {}}
    try:
        for size in sizes:
            sizedir = os.path.join(workdir, f"{size / (1 << 20):g}MiB")
            inputs = os.path.join(sizedir, "inputs")
            os.makedirs(inputs, exist_ok=True)
            for system in systems:
                if system in TESTBED_SYSTEMS:
                    with open(os.path.join(inputs, f"{system}.yaml"), "w") as f:
                        f.write(testbed_scenario(system, size, args.roce_fabric))
            with open(os.path.join(inputs, "topo.txt"), "w") as f:
                f.write(htsim_topology())
            with open(os.path.join(inputs, "incast.cm"), "w") as f:
                f.write(htsim_matrix(size))

            results = {s: [] for s in systems}
            for rnd in range(args.rounds):
                for system in systems:
                    rundir = os.path.join(sizedir, system, f"round-{rnd + 1}")
                    os.makedirs(rundir, exist_ok=True)
                    if system in TESTBED_SYSTEMS:
                        argv = [testbed, "--scenario", os.path.join(inputs, f"{system}.yaml"),
                                "--quiet", "--out", os.path.join(rundir, "out")]
                    else:
                        for name in ("topo.txt", "incast.cm"):
                            dst = os.path.join(rundir, name)
                            if not os.path.exists(dst):
                                os.symlink(os.path.join(inputs, name), dst)
                        argv = [os.path.join(bindir, system)] + htsim_args(system, size, args)
                    with open(os.path.join(rundir, "command.txt"), "w") as f:
                        f.write(" ".join(argv) + "\n")
                    print(f"  {size / (1 << 20):g} MiB round {rnd + 1}/{args.rounds}: {system} ...", end="", flush=True,
                          file=sys.stderr)
                    rc, wall, cpu, rss = run_pinned(argv, rundir, args.core, os.path.join(rundir, "stdout.txt"),
                                               os.path.join(rundir, "stderr.txt"))
                    try:
                        if system in TESTBED_SYSTEMS:
                            r = parse_testbed(system, os.path.join(rundir, "out"))
                        else:
                            r = parse_htsim(system, os.path.join(rundir, "stdout.txt"), size)
                    except (OSError, ValueError, KeyError) as e:
                        r = {"data": None, "resent": None, "flows": len(SENDERS), "done": 0, "fcts_ns": [],
                             "note": f"no results ({e})"}
                    if rc != 0:
                        r["note"] = (r["note"] + "; " if r["note"] else "") + f"exit status {rc} (see {rundir})"
                    r.update(rc=rc, wall=wall, cpu=cpu, rss_kib=rss)
                    results[system].append(r)
                    if rc != 0 or r["data"] is None or r["done"] != r["flows"]:
                        status = 1
                    print(f" {wall:.2f} s ({cpu:.2f} s CPU), {r['data']} DATA, {r['done']}/{r['flows']} flows, "
                          f"{rss / 1024:.0f} MiB", file=sys.stderr)
            everything["sizes"][str(size)] = report(size, systems, results)
            print(f"  load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if tmp is not None:
            tmp.cleanup()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(everything, f, indent=2)
    return status


if __name__ == "__main__":
    sys.exit(main())
