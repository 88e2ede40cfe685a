"""Live capture of a running laps to pcapng (docs/app.md "Live capture"), with no secondary
process: two instances on a live link (configs/app-ring.yaml), a capture
from the config (`capture:`, fabric side, 0.2 s) and two from the console at
the prompt (fabric side of pid 1, 100 packets; host side, 60 packets). Each
file is read by tshark with the project's dissector (tools/wireshark/laps.lua):
every fabric packet is LAPS, the pid filter keeps pid 1 only, the host side
has no LAPS header, counts and the duration hold, timestamps are the wall
clock's.

usage: capture_test.py LAPS_BINARY CONFIG(configs/app-ring.yaml)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LUA = os.path.join(ROOT, "tools", "wireshark", "laps.lua")


def dissect(path, fields):
    """One tuple of `fields` per packet, through tshark and laps.lua."""
    cmd = ["tshark", "-r", path, "-X", f"lua_script:{LUA}", "-T", "fields", "-E", "separator=|"]
    for f in fields:
        cmd += ["-e", f]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    t.check(p.returncode == 0, f"tshark failed on {path}: {p.stderr}")
    return [tuple(line.split("|")) for line in p.stdout.splitlines()]


def main():
    laps, template = sys.argv[1], sys.argv[2]
    if not shutil.which("tshark"):
        print("SKIP: tshark not installed (tools/setup installs it)")
        sys.exit(t.SKIP)
    with tempfile.TemporaryDirectory() as tmp:
        config = t.live_ring_config(template, tmp)
        with open(config, "a") as f:
            f.write(f"capture: {{file: {tmp}/start.pcapng, side: fabric, seconds: 0.2}}\n")
        started = time.time()
        s = t.Prompt(laps, config, "capture", "0@0,1@1,2@1,3@0")
        try:
            s.expect(f"packets written to {tmp}/start.pcapng (seconds elapsed)", 60)
            s.send(f"capture start {tmp}/pid1.pcapng side fabric pid 1 count 100")
            s.expect(f"100 packets written to {tmp}/pid1.pcapng (count reached)", 60)
            s.send("show capture")
            shown = s.expect("after_limit")
            t.check(f"file {tmp}/pid1.pcapng side fabric pid 1 count 100" in shown and "written 100" in shown,
                    f"show capture: {shown!r}")
            s.send(f"capture start {tmp}/host.pcapng side host count 60")
            s.expect(f"60 packets written to {tmp}/host.pcapng (count reached)", 60)
            s.send("capture start /nonexistent/x.pcapng")
            s.expect("error: capture: /nonexistent/x.pcapng: No such file or directory")
            s.send("quit")
            rc, out, rep = s.finish()
        finally:
            if s.p.poll() is None:
                s.p.kill()
        t.check_no_leak(rep, rc)
        ended = time.time()

        fields = ["frame.time_epoch", "frame.interface_name", "frame.packet_flags_direction", "laps.type",
                  "laps.pid", "udp.dstport"]
        first = dissect(f"{tmp}/start.pcapng", fields)
        t.check(len(first) > 0, "the config's capture is empty")
        times = [float(r[0]) for r in first]
        t.check(started - 1 <= min(times) and max(times) <= ended + 1,
                f"timestamps {min(times)}..{max(times)} outside the run {started}..{ended}")
        t.check(max(times) - min(times) <= 0.3, f"a 0.2 s capture spans {max(times) - min(times):.3f} s")
        t.check(all(r[3] in ("1", "2", "3", "4") for r in first), "a fabric packet that is not LAPS")
        # rte_pcapng names an interface dpdk:<port id>: the two fabric ports here.
        fabric_ports = {f"dpdk:{m}" for m in re.findall(r"port [ab]\.fabric: \S+ \(net_ring, port (\d+),", out)}
        t.check(len(fabric_ports) == 2 and {r[1] for r in first} == fabric_ports,
                f"interfaces {({r[1] for r in first})}, fabric ports {fabric_ports}")

        pid1 = dissect(f"{tmp}/pid1.pcapng", fields)
        t.check(len(pid1) == 100, f"pid 1 capture has {len(pid1)} packets, expected 100")
        t.check(all(r[4] == "1" for r in pid1), f"pids in the pid 1 capture: {sorted({r[4] for r in pid1})}")
        types = {r[3] for r in pid1}
        # Flow traffic, not only probes: DATA, or the ACKs that return on its
        # path (under qemu a 100-packet window can hold only the ACK tail of a
        # burst sent before pid 1's latency made Eq. 1 leave it).
        t.check(types & {"1", "2"}, f"no DATA or ACK on pid 1: LAPS types {types}")

        host = dissect(f"{tmp}/host.pcapng", fields)
        t.check(len(host) == 60, f"host capture has {len(host)} packets, expected 60")
        t.check(all(r[3] == "" and r[5] == "5000" for r in host), "a host-side frame with a LAPS header")
        # a's host port only receives (frames to send), b's only sends (frames
        # delivered): each packet's interface and direction must agree.
        host_ports = dict(re.findall(r"port ([ab])\.host: \S+ \(net_pcap, port (\d+),", out))
        t.check(set(host_ports) == {"a", "b"}, f"host ports in the log: {host_ports}")
        expected = {f"dpdk:{host_ports['a']}": 1, f"dpdk:{host_ports['b']}": 2}  # pcapng: 1 in, 2 out
        for r in host:
            t.check(expected.get(r[1]) == int(r[2], 16) & 3,
                    f"host frame on {r[1]} with direction {r[2]} (expected {expected})")
        print(f"OK: config capture {len(first)} packets in {max(times) - min(times):.3f} s, pid 1 x100 "
              f"(types {sorted(types)}), host x60; all dissected by laps.lua")


if __name__ == "__main__":
    main()
