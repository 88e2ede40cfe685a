#!/usr/bin/env python3
"""tools/wireshark/laps.lua on the example packets of docs/wire-format.md.

usage: dissector_test.py LAPS_LUA WIRE_EXAMPLES_GEN
Exits 77 (meson: skipped) when tshark is not installed.
"""
import os
import shutil
import subprocess
import sys
import tempfile

# Fields of wire::field_layout that the dissector must register (wire/layout.hpp).
LAYOUT_FIELDS = [
    "laps.version_type", "laps.flags", "laps.anchor_count", "laps.anchor_index", "laps.pid",
    "laps.time", "laps.flow_id", "laps.seq", "laps.inner_length", "laps.window_offset",
    "laps.acked_bytes", "laps.epoch", "laps.anchor",
]

FIELDS = [
    "laps.version", "laps.type", "laps.flags", "laps.flags.ecn_echo", "laps.flags.retransmit",
    "laps.anchor_count", "laps.anchor_index", "laps.pid", "laps.time", "laps.sent_ns",
    "laps.latency_ns", "laps.flow_id", "laps.seq", "laps.inner_length", "laps.window_offset",
    "laps.anchor", "udp.srcport", "ip.src", "ip.dst", "ip.dsfield.dscp", "laps.acked_bytes",
    "laps.epoch", "laps.time_echo", "laps.flags.authenticated", "laps.auth.origin", "laps.auth.counter",
    "laps.run.count", "laps.run.ecn_echo", "laps.run.seq", "laps.run.latency_delta", "laps.run.latency_ns",
    "laps.run.time_echo", "laps.run.acked_bytes", "laps.flags.pull", "laps.credit.granted",
]

# One row per frame that wire_examples_gen writes, in order. Values as tshark
# prints them with -T fields (aggregated with ","; inner frame fields follow
# the outer ones).
EXPECTED = [
    {  # DATA, the doc's example
        "laps.version": "2", "laps.type": "1", "laps.flags": "0x00", "laps.epoch": "0x00c0ffee",
        "laps.acked_bytes": "",
        "laps.flags.ecn_echo": "0", "laps.flags.retransmit": "0",
        "laps.anchor_count": "2", "laps.anchor_index": "0", "laps.pid": "258",
        "laps.time": str(0x123456789ABC), "laps.sent_ns": str(0x123456789ABC),
        "laps.latency_ns": "", "laps.flow_id": "7", "laps.seq": "42",
        "laps.inner_length": "50", "laps.window_offset": "0",
        "laps.anchor": "167772417,167772674", "udp.srcport": "53812,1000",
        "ip.src": "10.0.0.1,192.168.1.10", "ip.dst": "10.0.1.2,192.168.2.20",
        "ip.dsfield.dscp": "0,0",
    },
    {  # ACK: reversed anchors, latency -1500 ns, EF
        "laps.type": "2", "laps.flags.ecn_echo": "0", "laps.anchor_count": "2",
        "laps.anchor_index": "0", "laps.pid": "258", "laps.time": str(0xFFFFFFFFFA24),
        "laps.sent_ns": "", "laps.latency_ns": "-1500", "laps.flow_id": "7", "laps.seq": "42",
        "laps.inner_length": "", "laps.time_echo": "0x9abc", "laps.anchor": "167772674,167772417",
        "udp.srcport": "53812", "ip.src": "10.0.1.2", "ip.dst": "10.0.0.1",
        "ip.dsfield.dscp": "46", "laps.acked_bytes": "128", "laps.epoch": "0x00c0ffee",
    },
    {  # PROBE
        "laps.type": "3", "laps.anchor_count": "1", "laps.pid": "3", "laps.time": "65536",
        "laps.sent_ns": "65536", "laps.latency_ns": "", "laps.flow_id": "0", "laps.seq": "9",
        "laps.anchor": "167772931", "udp.srcport": str(0xC042), "ip.dsfield.dscp": "0",
    },
    {  # PROBE_ACK
        "laps.type": "4", "laps.pid": "3", "laps.latency_ns": "2500", "laps.seq": "9",
        "laps.anchor": "167772931", "ip.src": "10.0.1.2", "ip.dsfield.dscp": "46",
        "laps.acked_bytes": "74", "laps.epoch": "0x00c0ffee",
    },
    {  # ACK_RUN: the ACK of seq 42 (latency 500) and a run block of seq 43 and 44
        "laps.type": "5", "laps.flags": "0x00", "laps.pid": "258", "laps.flow_id": "7", "laps.seq": "42",
        "laps.latency_ns": "500", "laps.time_echo": "0x9abc", "laps.acked_bytes": "128",
        "laps.anchor": "167772674,167772417", "ip.dsfield.dscp": "46", "laps.run.count": "2",
        "laps.run.ecn_echo": "0x00000002", "laps.run.seq": "43,44", "laps.run.latency_delta": "-800,-1600",
        "laps.run.latency_ns": "-300,-1100", "laps.run.time_echo": "0x9ddc,0xa0fc",
        "laps.run.acked_bytes": "128,128",
    },
    {  # DATA with the authentication trailer (docs/security.md): the inner frame after it
        "laps.type": "1", "laps.flags": "0x04", "laps.flags.authenticated": "1",
        "laps.flags.retransmit": "0", "laps.auth.origin": "0x00c0ffee", "laps.auth.counter": "1",
        "laps.inner_length": "50", "laps.anchor": "167772417,167772674",
        "ip.src": "10.0.0.1,192.168.1.10", "udp.srcport": "53812,1000",
    },
    {  # CREDIT: the 5th grant to the example DATA's flow, on its ACK's route
        "laps.type": "6", "laps.flags": "0x00", "laps.flags.pull": "0", "laps.pid": "258",
        "laps.flow_id": "7", "laps.seq": "5", "laps.credit.granted": "5", "laps.time": "0",
        "laps.anchor": "167772674,167772417", "udp.srcport": "53812", "ip.src": "10.0.1.2",
        "ip.dst": "10.0.0.1", "ip.dsfield.dscp": "46", "laps.epoch": "0x00c0ffee",
        "laps.inner_length": "0", "laps.window_offset": "0",
    },
    {  # DATA variant: 4 anchors, next is #1, retransmission
        "laps.type": "1", "laps.flags": "0x02", "laps.flags.retransmit": "1",
        "laps.flags.ecn_echo": "0", "laps.anchor_count": "4", "laps.anchor_index": "1",
        "laps.anchor": "1,2,3,4294967294", "laps.inner_length": "50",
    },
    {  # ACK variant: ECN echo, anchors reversed
        "laps.type": "2", "laps.flags": "0x01", "laps.flags.ecn_echo": "1",
        "laps.flags.retransmit": "0", "laps.anchor": "4294967294,3,2,1",
        "laps.anchor_index": "0",
    },
    {  # DATA variant: a receiver-paced flow asking for a credit
        "laps.type": "1", "laps.flags": "0x08", "laps.flags.pull": "1", "laps.flags.retransmit": "0",
        "laps.seq": "42", "laps.inner_length": "50",
    },
]

VERBOSE_LINES = [
    "Latency Aware Packet Spraying",
    "Type: DATA (1)",
    "Type: ACK (2)",
    "Type: PROBE (3)",
    "Type: PROBE_ACK (4)",
    "Type: CREDIT (6)",
    "Path id: 258",
    "One-way latency (ns): -1500",
    "Anchor: 167772417 (0x0a000101) [0] (next)",
    "Anchor: 2 (0x00000002) [1] (next)",
    "Data (8 bytes)",  # the inner UDP payload, reached through eth/ip/udp
]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}\n{r.stderr}")
    return r.stdout


def main():
    lua, gen = sys.argv[1], sys.argv[2]
    tshark = shutil.which("tshark")
    if tshark is None:
        print("SKIP: tshark is not installed")
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        pcap = os.path.join(tmp, "laps.pcap")
        run([gen, "pcap", pcap])
        base = [tshark, "-n", "-X", f"lua_script:{lua}", "-r", pcap]

        registered = run([tshark, "-G", "fields", "-X", f"lua_script:{lua}"])
        names = {line.split("\t")[2] for line in registered.splitlines() if line.startswith("F\t")}
        for name in LAYOUT_FIELDS:
            if name not in names:
                failures.append(f"field {name} is not registered")

        out = run(base + ["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"]
                  + [a for name in FIELDS for a in ("-e", name)])
        rows = out.rstrip("\n").split("\n")
        if len(rows) != len(EXPECTED):
            failures.append(f"{len(rows)} frames, expected {len(EXPECTED)}")
        for i, (row, want) in enumerate(zip(rows, EXPECTED), start=1):
            # Booleans print as 0/1 or False/True depending on the tshark version.
            cells = [c.replace("False", "0").replace("True", "1") for c in row.split("\t")]
            got = dict(zip(FIELDS, cells))
            for name, value in want.items():
                if got.get(name) != value:
                    failures.append(f"frame {i}: {name} = {got.get(name)!r}, expected {value!r}")

        verbose = run(base + ["-V"])
        for line in VERBOSE_LINES:
            if line not in verbose:
                failures.append(f"-V output lacks {line!r}")
        if "Malformed" in verbose or "Expert Info (Error" in verbose:
            failures.append("an example packet is reported malformed")

        # The port preference moves the dissector.
        moved = run(base + ["-o", "laps.udp_port:19522", "-T", "fields", "-e", "laps.type"])
        if moved.strip():
            failures.append(f"laps.udp_port:19522 still decodes port 19521: {moved!r}")

    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"ok: {len(EXPECTED)} frames decoded as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
