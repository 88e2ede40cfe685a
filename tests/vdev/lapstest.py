"""Helpers for the vdev and smoke tests of the laps binary (stdlib only).

- pcap files: read (microsecond and nanosecond magic, as net_pcap writes)
  and write;
- host frames: Ethernet/IPv4/UDP and RoCEv2 (UDP 4791 + BTH + ICRC), ARP;
- the LAPS encapsulation decoded field by field (docs/wire-format.md);
- running laps with --no-huge vdevs, a unique --file-prefix, and reading its
  final "name: value" report;
- config text the tests and the benchmarks of bench/app share (TWO_PATHS,
  loop_config).

Also a command line to make traffic pcaps for the configs in configs/:
  python3 tests/vdev/lapstest.py gen --out /tmp/a_to_b.pcap --src 10.0.0.1 --dst 10.0.0.2 --flows 4 --packets 64
"""

import argparse
import os
import platform
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

SKIP = 77
LAPS_PORT = 19521
ROCEV2_PORT = 4791
DATA, ACK, PROBE, PROBE_ACK, ACK_RUN = 1, 2, 3, 4, 5
FLAG_ECN_ECHO, FLAG_RETRANSMIT = 0x01, 0x02

EAL_BASE = ["--no-huge", "--no-shconf", "--no-pci", "-m", "512", "--log-level=lib.eal:error"]


# ---------------------------------------------------------------- pcap

def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i // 1000000, i % 1000000, len(fr), len(fr)))
            f.write(fr)


def read_pcap_records(path):
    """[(time in ns, frame)] of a pcap file (microsecond or nanosecond)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError(f"{path}: not a pcap file ({len(data)} bytes)")
    magic = struct.unpack("<I", data[:4])[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        raise ValueError(f"{path}: unknown pcap magic {magic:#x}")
    sub_ns = 1 if magic == 0xA1B23C4D else 1000
    records, off = [], 24
    while off + 16 <= len(data):
        sec, frac, caplen, length = struct.unpack("<IIII", data[off:off + 16])
        off += 16
        if off + caplen > len(data):
            break  # a record still being written
        if caplen != length:
            raise ValueError(f"{path}: truncated capture ({caplen} of {length} bytes)")
        records.append((sec * 1_000_000_000 + frac * sub_ns, bytes(data[off:off + caplen])))
        off += caplen
    return records


def read_pcap(path):
    return [frame for _, frame in read_pcap_records(path)]


# ---------------------------------------------------------------- frames

def mac(text):
    return bytes(int(b, 16) for b in text.split(":"))


def ip4(text):
    return bytes(int(b) for b in text.split("."))


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4_packet(src, dst, proto, payload, tos=0, ident=0, ttl=64):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(payload), ident, 0x4000, ttl, proto, 0, ip4(src), ip4(dst))
    hdr = hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:]
    return hdr + payload


def udp_frame(src, dst, sport, dport, payload, src_mac="02:00:00:00:00:01", dst_mac="02:00:00:00:00:02", ident=0):
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    pseudo = ip4(src) + ip4(dst) + struct.pack("!BBH", 0, 17, len(udp))
    c = checksum(pseudo + udp) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    return mac(dst_mac) + mac(src_mac) + b"\x08\x00" + ipv4_packet(src, dst, 17, udp, ident=ident)


def rocev2_frame(src, dst, sport, qp, psn, payload, **kw):
    bth = struct.pack("!BBHI I", 0x04, 0x40, 0xFFFF, qp & 0xFFFFFF, psn & 0xFFFFFF)
    return udp_frame(src, dst, sport, ROCEV2_PORT, bth + payload + b"\0\0\0\0", **kw)


def arp_frame(src_mac="02:00:00:00:00:01"):
    body = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, mac(src_mac), ip4("10.0.0.1"), b"\0" * 6,
                       ip4("10.0.0.2"))
    return b"\xff" * 6 + mac(src_mac) + b"\x08\x06" + body + b"\0" * 18


def payload_for(flow, index, size):
    """A payload that names its flow and index, padded to `size` bytes."""
    head = struct.pack("!II", flow, index)
    return (head + bytes((i * 7 + flow) & 0xFF for i in range(max(0, size - 8))))[:max(size, 8)]


def traffic(src="10.0.0.1", dst="10.0.0.2", udp_flows=3, udp_packets=20, roce_qps=2, roce_packets=10, size=200):
    """Host frames of several UDP flows and RoCEv2 QPs, interleaved; returns [(flow, frame)]."""
    out = []
    for i in range(max(udp_packets, roce_packets)):
        for f in range(udp_flows):
            if i < udp_packets:
                out.append((f, udp_frame(src, dst, 40000 + f, 5000, payload_for(f, i, size), ident=i)))
        for q in range(roce_qps):
            if i < roce_packets:
                flow = 100 + q
                out.append((flow, rocev2_frame(src, dst, 50000, 0x1000 + q, i, payload_for(flow, i, size))))
    return out


# ---------------------------------------------------------------- LAPS decode

LAPS_VERSION = 2
LAPS_FIXED = 28  # docs/wire-format.md §5
AUTH_TRAILER = 20  # docs/wire-format.md "Authentication"


class Laps:
    """One outer frame decoded; raises ValueError when it is not LAPS."""

    def __init__(self, frame, udp_port=LAPS_PORT):
        if len(frame) < 42 + LAPS_FIXED:
            raise ValueError("too short for LAPS")
        self.frame = frame
        self.eth_dst, self.eth_src = frame[0:6], frame[6:12]
        self.ethertype = struct.unpack("!H", frame[12:14])[0]
        ip = frame[14:34]
        (self.ver_ihl, self.tos, self.ip_len, self.ip_id, self.ip_frag, self.ttl, self.proto, self.ip_csum,
         self.src_ip, self.dst_ip) = struct.unpack("!BBHHHBBH4s4s", ip)
        self.ip_csum_ok = checksum(ip) == 0
        self.sport, self.dport, self.udp_len, self.udp_csum = struct.unpack("!HHHH", frame[34:42])
        if self.ethertype != 0x0800 or self.proto != 17 or self.dport != udp_port:
            raise ValueError("not LAPS")
        h = frame[42:]
        self.version = h[0] >> 4
        self.type = h[0] & 0x0F
        self.flags, self.anchor_count, self.anchor_index = h[1], h[2], h[3]
        self.pid = struct.unpack("!H", h[4:6])[0]
        self.time = int.from_bytes(h[6:12], "big")
        self.flow_id, self.seq, at20, at22, self.epoch = struct.unpack("!IIHHI", h[12:28])
        # Bytes 20-23: inner_length and window_offset in DATA, time_echo and
        # acked_bytes in ACK/PROBE_ACK.
        answer = self.type in (ACK, PROBE_ACK, ACK_RUN)
        self.inner_length = 0 if answer else at20
        self.time_echo = at20 if answer else 0
        self.window_offset = 0 if answer else at22
        self.acked_bytes = at22 if answer else 0
        self.anchors = list(struct.unpack(f"!{self.anchor_count}I",
                                          h[LAPS_FIXED:LAPS_FIXED + 4 * self.anchor_count]))
        # ACK_RUN: the run block after the anchors (docs/wire-format.md
        # "ACK_RUN"): count, ECN bitmap, then per further answered DATA
        # (seq, latency, time_echo, acked_bytes), latency as signed ns.
        anchors_end = LAPS_FIXED + 4 * self.anchor_count
        self.run = []
        run_size = 0
        if self.type == ACK_RUN:
            count = h[anchors_end]
            if not 1 <= count <= 31 or len(h) < anchors_end + 8 + 12 * count:
                raise ValueError("bad ACK_RUN block")
            ecn = struct.unpack("!I", h[anchors_end + 4:anchors_end + 8])[0]
            base = self.time - (1 << 48) if self.time >= 1 << 47 else self.time
            for i in range(count):
                at = anchors_end + 8 + 12 * i
                seq, delta, echo, acked = struct.unpack("!IiHH", h[at:at + 12])
                self.run.append({"seq": seq, "latency_ns": base + delta, "time_echo": echo,
                                 "acked_bytes": acked, "ecn_echo": bool(ecn >> i & 1)})
            run_size = 8 + 12 * count
        # With flag 0x04 the authentication trailer follows the anchors (and
        # a run block) (docs/wire-format.md "Authentication"): origin, counter, tag.
        self.authenticated = bool(self.flags & 0x04)
        self.header_size = anchors_end + run_size + (AUTH_TRAILER if self.authenticated else 0)
        self.inner = frame[42 + self.header_size:]

    @property
    def entropy(self):
        return self.sport & 0x3FFF


def is_laps(frame, udp_port=LAPS_PORT):
    try:
        Laps(frame, udp_port)
        return True
    except (ValueError, struct.error):
        return False


# ---------------------------------------------------------------- running laps

# ELF e_machine of the machines the tests run on natively.
ELF_MACHINES = {"x86_64": 62, "aarch64": 183}


def emulated(binary):
    """Whether `binary` runs under emulation here (an arm64 laps under
    qemu-user on x86_64, tools/test-arm64): its ELF machine is not the
    host's. Timing bounds measured on a CPU do not hold there as they are."""
    with open(binary, "rb") as f:
        header = f.read(20)
    check(header[:4] == b"\x7fELF", f"{binary} is not an ELF file")
    machine = struct.unpack_from("<H", header, 18)[0]
    return machine != ELF_MACHINES.get(platform.machine(), machine)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def replay_ports(tmp):
    """The config lines of a one-worker laps that replays {tmp}/in.pcap from
    its host port and writes {tmp}/host_out.pcap and {tmp}/fabric_out.pcap."""
    return (f'ports:\n'
            f'  host:   {{devargs: "net_pcap0,rx_pcap={tmp}/in.pcap,tx_pcap={tmp}/host_out.pcap"}}\n'
            f'  fabric: {{devargs: "net_pcap1,tx_pcap={tmp}/fabric_out.pcap"}}\n'
            f'lcores: {{control: 0, workers: [1]}}\n')


def eal_args(name, lcores="0,1", kind="test"):
    """EAL's arguments for a run of its own: --no-huge vdevs and a --file-prefix
    no other run shares; `lcores` as -l (0,1 or 0-3) or as --lcores (0@0,1@0)."""
    args = ["--file-prefix", f"laps-{kind}-{name}-{os.getpid()}"] + EAL_BASE
    args += (["--lcores", lcores] if "@" in lcores else ["-l", lcores])
    return args


def parse_report(stdout):
    report = {}
    for line in stdout.splitlines():
        m = re.match(r"^([\w.\-]+): (\d+(?:\.\d+)?)$", line)
        if m:
            report[m.group(1)] = float(m.group(2)) if "." in m.group(2) else int(m.group(2))
    return report


def laps_command(laps, config_path, name, lcores="0,1", extra=(), wrapper=(), kind="test"):
    """The command line of a laps run without a console; `wrapper` goes first
    (valgrind ...)."""
    return (list(wrapper) + [laps] + eal_args(name, lcores, kind) + ["--", "--config", config_path,
                                                                     "--no-interactive"] + list(extra))


def run_laps(laps, config_path, name, lcores="0,1", timeout=120, extra=()):
    """Runs laps to its end; returns (exit code, stdout, stderr, report). A
    run still going after `timeout` s gets SIGTERM (then SIGKILL) and what it
    printed so far is shown, so the failure says where it stood. Under
    qemu-user (emulated()) such a run is started once more: CI saw one run of
    an arm64 laps under qemu stall past every stop condition of its config
    while the same test passed natively, under sanitizers, and in 30 emulated
    reruns here (docs/arm.md "Emulation stalls")."""
    cmd = laps_command(laps, config_path, name, lcores, extra)
    attempts = 2 if emulated(laps) else 1
    for attempt in range(1, attempts + 1):
        print("+ " + " ".join(cmd), flush=True)
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
            try:
                rc = p.wait(timeout=timeout)
                ended = True
            except subprocess.TimeoutExpired:
                ended = False
                os.kill(p.pid, signal.SIGTERM)
                try:
                    rc = p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.kill(p.pid, signal.SIGKILL)
                    rc = p.wait()
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        print(stdout[-6000:])
        print(stderr[-3000:], file=sys.stderr)
        if ended:
            return rc, stdout, stderr, parse_report(stdout)
        if attempt < attempts:
            print(f"laps had not ended after {timeout} s under emulation (exit {rc} after SIGTERM): "
                  "its output is above; running it once more", flush=True)
    fail(f"laps had not ended after {timeout} s (exit {rc} after SIGTERM); its output so far is above")


def run_script(laps, config_path, name, lcores, script, tmp, timeout=120):
    """laps with console commands from `script` (--cmdline-file), which ends
    in `quit`: checked to have stopped there with every mbuf back. Returns
    its output and report."""
    with open(f"{tmp}/script.txt", "w") as f:
        f.write(script)
    rc, out, _, report = run_laps(laps, config_path, name, lcores, timeout=timeout,
                                  extra=["--cmdline-file", f"{tmp}/script.txt"])
    check_no_leak(report, rc)
    check("laps: stopped: console: quit" in out, "the session did not end by quit")
    return out, report


def start_laps(laps, config_path, name, lcores="0,1", extra=()):
    cmd = laps_command(laps, config_path, name, lcores, extra)
    print("+ " + " ".join(cmd), flush=True)
    out = tempfile.NamedTemporaryFile("w+", delete=False, suffix=".out")
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True)
    return p, out.name


def report_of_run(cmd, timeout=3600):
    """Runs a laps command line to its end without echoing it (benchmarks):
    its report and stderr, or exit with its output when it failed or printed
    no report."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    report = parse_report(p.stdout)
    if p.returncode != 0 or "laps.run.seconds" not in report:
        sys.exit(f"laps failed ({p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return report, p.stderr


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    fail(f"timed out after {timeout} s waiting for {what}")


def stop_laps(p, out_path, timeout=60):
    """SIGTERM to the one process we started, then its output."""
    if p.poll() is None:
        os.kill(p.pid, signal.SIGTERM)
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        fail("laps did not stop within %d s of SIGTERM" % timeout)
    with open(out_path) as f:
        text = f.read()
    os.unlink(out_path)
    print(text[-6000:])
    return p.returncode, text, parse_report(text)


def check_no_leak(report, rc):
    pools = {k: v for k, v in report.items() if k.startswith("mempool.") and k.endswith(".in_use")}
    check(pools, "no mempool report in the output")
    for k, v in pools.items():
        check(v == 0, f"{k} = {v}: mbufs leaked")
    check(rc == 0, f"laps exited with {rc}")
    check_accounting(report)


# docs/pipeline.md "Receiver guarantees": every frame an engine took is
# accounted for at exit, by outcome, for every instance and every worker.
SENDER_OUTCOMES = ["data_acked", "send_drop_encap", "data_drop_destination_removed", "stop_free_queued",
                   "stop_free_in_flight"]
RECEIVER_OUTCOMES = ["data_delivered", "data_drop_duplicate", "data_drop_beyond_window", "data_drop_flow_table_full",
                     "data_drop_decap", "data_drop_bad_window_offset", "reorder_drop_timeout", "stop_free_held"]


def check_accounting(report):
    prefixes = [k[:-len("host_rx")] for k in report if k.endswith(".engine.host_rx")]
    check(prefixes, "no engine counters in the report")
    for pre in prefixes:
        def c(name):
            return report.get(pre + name, 0)
        host = [k[len(pre):] for k in report if k.startswith(pre + "host_passthrough_") or k.startswith(pre + "host_drop_")]
        taken = c("host_rx")
        outcomes = sum(c(n) for n in SENDER_OUTCOMES + host)
        check(taken == outcomes, f"{pre}host_rx {taken} != {outcomes}, the sum of "
              + " + ".join(f"{n} {c(n)}" for n in SENDER_OUTCOMES + host if c(n)))
        received = c("data_rx")
        ends = sum(c(n) for n in RECEIVER_OUTCOMES)
        check(received == ends, f"{pre}data_rx {received} != {ends}, the sum of "
              + " + ".join(f"{n} {c(n)}" for n in RECEIVER_OUTCOMES if c(n)))


def file_prefix(p):
    """The --file-prefix of a laps process started by run_laps/start_laps."""
    return p.args[p.args.index("--file-prefix") + 1]


def runtime_dir(prefix):
    """Where EAL puts the runtime files of `prefix` (the telemetry socket):
    the rule of EAL and dpdk-telemetry.py."""
    base = os.environ.get("RUNTIME_DIRECTORY") or (
        "/var/run" if os.getuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp"))
    return os.path.join(base, "dpdk", prefix)


# One destination, 10.0.0.2, over two paths: pid 0 direct, pid 1 through
# anchors 70 and 71 (the tables of configs/app-pcap.yaml).
TWO_PATHS = """paths:
  pst:
    - {dst: 10.0.0.2, pids: [0, 1]}
  pit:
    - {pid: 0, base_ns: 10000, uncongested_ns: 6000}
    - {pid: 1, base_ns: 15000, uncongested_ns: 9000, anchors: [70, 71]}
"""


def loop_config(host_devargs, workers, stop, steering=None, timeout_us=None):
    """A laps config for the full LAPS loop (docs/app.md "What the null run
    measures"): host frames from `host_devargs` (net_pcap, infinite_rx), the
    fabric a loop-back net_ring vdev, so each worker encapsulates, receives its
    own DATA, ACKs it, delivers the frame and takes the ACK. `stop`: the run:
    section's map; `steering`: a steering: map; `timeout_us`: the path
    timeout's floor."""
    lcores = ", ".join(str(w + 1) for w in range(workers))
    timeout = f", min_timeout_us: {timeout_us}" if timeout_us is not None else ""
    steering_line = f"steering: {steering}\n" if steering else ""
    return (f'version: 1\n'
            f'ports:\n'
            f'  host:   {{devargs: "{host_devargs}"}}\n'
            f'  fabric: {{devargs: "net_ring0"}}\n'
            f'lcores: {{control: 0, workers: [{lcores}]}}\n'
            f'{steering_line}'
            f'outer: {{ip: 10.0.0.1, next_hop_mac: "02:00:00:00:00:fe"}}\n'
            f'selection: {{probing: false}}\n'
            f'retransmit: {{window_packets: 64{timeout}}}   # DATA + ACKs in flight fit the 1024-entry net_ring\n'
            f'run: {stop}\n' + TWO_PATHS)


def with_test_cc(text, after="    retransmit: {initial_timeout_us: 20000}\n",
                 congestion="{cc: credit, credit: {downlink_gbps: 1}}"):
    """The config `text` (configs/app-ring.yaml's by default) with both
    instances under receiver-paced credits when the test runs as its *_credit
    variant (LAPS_TEST_CC=credit, tests/vdev/meson.build; docs/congestion.md
    "Receiver-paced credits"): `congestion` goes in after the line `after` of
    each instance (on the ring, b paces its credits for a 1 Gb/s downlink and a
    sends on them)."""
    if os.environ.get("LAPS_TEST_CC") != "credit":
        return text
    credit = text.replace(after, after + f"    congestion: {congestion}\n")
    check(credit.count("cc: credit") == 2, f"LAPS_TEST_CC=credit: no two instances with the line {after.strip()!r} "
          "(the config changed: update the test's with_test_cc call)")
    print("receiver-paced credits (LAPS_TEST_CC): both instances run cc: credit", flush=True)
    return credit


def with_test_acks(text):
    """`text` with every engine section coalescing its ACKs when the test runs
    as its *_coalesced variant (LAPS_TEST_ACKS=coalesced, tests/vdev/meson.build):
    the same checks then hold with ACK_RUNs on the link (docs/wire-format.md)."""
    if os.environ.get("LAPS_TEST_ACKS") != "coalesced":
        return text
    coalesced = text.replace("engine: {", "engine: {acks: coalesced, ")
    check(coalesced != text, "LAPS_TEST_ACKS=coalesced: the config has no 'engine: {' section to set acks in")
    print("ACKs coalesced (LAPS_TEST_ACKS): every engine section has acks: coalesced", flush=True)
    return coalesced


def ring_replay_text(template, tmp, run="run: {idle_ms: 1000, duration_ms: 90000}"):
    """configs/app-ring.yaml's text with a replaying {tmp}/a.pcap once, b
    writing what it delivers to {tmp}/b_host.pcap, and `run` as the stop
    conditions."""
    with open(template) as f:
        text = f.read()
    text = text.replace("/tmp/laps-ring-a.pcap", f"{tmp}/a.pcap").replace(
        "/tmp/laps-ring-b-host.pcap", f"{tmp}/b_host.pcap")
    text = text.replace("run: {idle_ms: 2000, duration_ms: 60000}", run)
    check(f"{tmp}/a.pcap" in text and run in text, "configs/app-ring.yaml changed: update lapstest.ring_replay_text")
    return with_test_cc(with_test_acks(text))


# Per-flow order on the real-time link (configs/app-ring.yaml). b gives up a
# gap after engine.reorder_timeout_ms (10 ms by default) and delivers what
# arrives of it late, out of order, by design (docs/pipeline.md "Receiver
# guarantees"). On a shared 2-core machine, and more so under qemu, a
# busy-polling lcore (the link's, holding the gap's packet) can be descheduled
# for longer than that while b's worker runs on: a test of order would fail on
# the machine's scheduling. These tests give b a timeout beyond any such stall
# and assert that no gap was given up, so a failure of order is the data path's.
PATIENT_REORDER_MS = 5000


def patient_reorder(text):
    """configs/app-ring.yaml's text with b's reorder timeout at PATIENT_REORDER_MS."""
    patient = text.replace("in_order: true}", f"in_order: true, reorder_timeout_ms: {PATIENT_REORDER_MS}}}")
    check(patient != text, "configs/app-ring.yaml changed: b's engine line (update lapstest.patient_reorder)")
    return patient


def check_no_gap_given_up(report, what, side="b"):
    """The premise of an order check: `side` gave up no gap (timeout or hold limit)."""
    for counter in ("reorder_timeout", "reorder_hold_limit", "data_delivered_late"):
        value = report.get(f"{side}.engine.{counter}")
        check(value is not None, f"{what}: no {side}.engine.{counter} in the report")
        check(value == 0, f"{what}: {side}.engine.{counter} = {value}: a gap outlasted "
              f"reorder_timeout_ms {PATIENT_REORDER_MS} or the hold limit (a stall of the machine, or lost DATA "
              "never resent)")


def check_few_resends(report, what, laps, sides=("a", "b")):
    """A loss-free link with per-path order: the path timeout follows the
    measured round trip (retransmit/rto_estimator.hpp), so at most 1% of each
    side's DATA is resent (docs/pipeline.md "What it guarantees"); 10% under
    emulation, where a round trip is milliseconds of qemu (docs/arm.md)."""
    at_most = 0.10 if emulated(laps) else 0.01
    for side in sides:
        sent = report.get(f"{side}.engine.data_sent", 0)
        resent = report.get(f"{side}.engine.data_resent", 0)
        check(resent <= at_most * max(sent, 1),
              f"{what}: {side} resent {resent} of {sent} DATA on a loss-free link (at most {at_most:.0%})")


def live_ring_config(template, tmp, duration_ms=300000):
    """configs/app-ring.yaml with a replaying forever (infinite_rx) and b's
    host output to /dev/null: a link that carries traffic until stopped."""
    flows = traffic(udp_flows=8, udp_packets=50, roce_qps=0, roce_packets=0, size=1000)
    write_pcap(f"{tmp}/a.pcap", [f for _, f in flows])
    with open(template) as f:
        text = f.read()
    text = text.replace("net_pcap0,rx_pcap=/tmp/laps-ring-a.pcap", f"net_pcap0,rx_pcap={tmp}/a.pcap,infinite_rx=1")
    text = text.replace("net_pcap1,tx_pcap=/tmp/laps-ring-b-host.pcap", "net_pcap1,tx_pcap=/dev/null")
    text = text.replace("run: {idle_ms: 2000, duration_ms: 60000}", f"run: {{duration_ms: {duration_ms}}}")
    text = text.replace("stats: {interval_ms: 1000}", "stats: {interval_ms: 0}")
    check(f"{tmp}/a.pcap" in text and "duration_ms: %d" % duration_ms in text,
          "configs/app-ring.yaml changed: update lapstest.live_ring_config")
    path = f"{tmp}/ring.yaml"
    with open(path, "w") as f:
        f.write(with_test_acks(text))
    return path


def path_tables(out, instance=None):
    """Per `show paths stats` in a console transcript, in order: {pid: DATA
    packets}, of `instance` alone when given (a process of several)."""
    tables = []
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line != "laps> show paths stats":
            continue
        counts = {}
        shown = instance is None
        for row in lines[i + 1:]:
            if row.startswith("laps> ") or row.startswith("laps: "):
                break
            if instance is not None and row.startswith("instance "):
                shown = row.startswith(f"instance {instance}:")
                continue
            m = re.match(r"\s+pid (\d+) packets (\d+) ", row)
            if shown and m:
                counts[int(m.group(1))] = int(m.group(2))
        tables.append(counts)
    return tables


class Prompt:
    """laps with its console on a pseudo-terminal, as a person at a terminal
    runs it: the pty is the controlling terminal, so Ctrl-C is a real
    keystroke there. send() types a line; expect() waits for text in what laps
    printed since the last expect (escape sequences and CRs removed)."""

    ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]|\r")

    def __init__(self, laps, config_path, name, lcores="0,1", extra=()):
        import fcntl
        import pty
        import termios
        master, slave = pty.openpty()
        cmd = [laps] + eal_args(name, lcores) + ["--", "--config", config_path] + list(extra)
        print("+ " + " ".join(cmd) + "   (on a pty)", flush=True)

        def controlling_tty():
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        self.p = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, preexec_fn=controlling_tty,
                                  close_fds=True)
        os.close(slave)
        self.fd = master
        self.raw = ""
        self.seen = 0

    def _read(self, timeout):
        import select
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # the other side closed (laps exited)
            return False
        if not data:
            return False
        self.raw += data.decode(errors="replace")
        return True

    def text(self):
        return self.ESCAPES.sub("", self.raw)

    def expect(self, pattern, timeout=30):
        """Waits for `pattern` (a string) after what earlier expects took; returns the text up to it."""
        deadline = time.monotonic() + timeout
        while True:
            clean = self.text()
            at = clean.find(pattern, self.seen)
            if at >= 0:
                out = clean[self.seen:at + len(pattern)]
                self.seen = at + len(pattern)
                return out
            left = deadline - time.monotonic()
            if left <= 0 or (not self._read(min(left, 0.2)) and self.p.poll() is not None):
                print(self.text()[-4000:])
                fail(f"timed out waiting for {pattern!r} (laps {'exited' if self.p.poll() is not None else 'runs'})")

    def type(self, keys):
        os.write(self.fd, keys.encode())

    def send(self, line):
        self.type(line + "\r")

    def finish(self, timeout=60):
        """Waits for laps to exit (after quit); returns (rc, text, report)."""
        deadline = time.monotonic() + timeout
        while self.p.poll() is None and time.monotonic() < deadline:
            self._read(0.2)
        if self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGKILL)
            self.p.wait()
            fail(f"laps did not exit within {timeout} s")
        while self._read(0.1):
            pass
        os.close(self.fd)
        text = self.text()
        print(text[-6000:])
        return self.p.returncode, text, parse_report(text.replace("\n\n", "\n"))


def main():
    ap = argparse.ArgumentParser(description="make host traffic pcaps for laps")
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--out", required=True)
    g.add_argument("--src", default="10.0.0.1")
    g.add_argument("--dst", default="10.0.0.2")
    g.add_argument("--flows", type=int, default=4)
    g.add_argument("--packets", type=int, default=64, help="per flow")
    g.add_argument("--size", type=int, default=1000, help="UDP payload bytes")
    g.add_argument("--rocev2", action="store_true", help="RoCEv2 QPs instead of UDP flows")
    a = ap.parse_args()
    if a.rocev2:
        frames = [f for _, f in traffic(a.src, a.dst, 0, 0, a.flows, a.packets, a.size)]
    else:
        frames = [f for _, f in traffic(a.src, a.dst, a.flows, a.packets, 0, 0, a.size)]
    write_pcap(a.out, frames)
    print(f"{a.out}: {len(frames)} frames")


if __name__ == "__main__":
    main()
