"""A `capture:` in the config captures from the first packet (docs/app.md
"Live capture"): two instances on the link (configs/app-ring.yaml), a
replaying 115 frames to b once, the capture on both sides from the config.
The file holds every host frame a's workers took (host RX, 115), every first
DATA transmission on a's fabric side (115 distinct flow and sequence pairs,
retransmit flag clear), and every one of them arriving at b (fabric RX).

usage: capture_start_test.py LAPS_BINARY CONFIG(configs/app-ring.yaml)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

LUA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "wireshark", "laps.lua")


def main():
    laps, template = sys.argv[1], sys.argv[2]
    if not shutil.which("tshark"):
        print("SKIP: tshark not installed (tools/setup installs it)")
        return t.SKIP
    with tempfile.TemporaryDirectory() as tmp:
        flows = t.traffic(udp_flows=5, udp_packets=23, roce_qps=0, roce_packets=0, size=600)
        frames = [f for _, f in flows]
        t.check(len(frames) == 115, f"{len(frames)} frames")
        t.write_pcap(f"{tmp}/a.pcap", frames)
        text = t.ring_replay_text(template, tmp) + f"capture: {{file: {tmp}/all.pcapng, side: both}}\n"
        with open(f"{tmp}/ring.yaml", "w") as f:
            f.write(text)
        rc, out, _, rep = t.run_laps(laps, f"{tmp}/ring.yaml", "capture-start", "0@0,1@1,2@1,3@0", timeout=150)
        t.check_no_leak(rep, rc)
        t.check(rep["b.engine.data_delivered"] == len(frames), "not every frame delivered")
        ports = dict(re.findall(r"port (\w\.\w+): \S+ \(\w+, port (\d+),", out))
        ports = {v: k for k, v in ports.items()}  # port id -> "a.host", "b.fabric", ...
        p = subprocess.run(["tshark", "-r", f"{tmp}/all.pcapng", "-X", f"lua_script:{LUA}", "-T", "fields",
                            "-E", "separator=|", "-e", "frame.interface_name", "-e", "frame.packet_flags_direction",
                            "-e", "laps.type", "-e", "laps.flow_id", "-e", "laps.seq", "-e", "laps.flags"],
                           capture_output=True, text=True, timeout=120)
        t.check(p.returncode == 0, f"tshark: {p.stderr}")
        rows = [line.split("|") for line in p.stdout.splitlines()]

        def at(where, direction):
            # pcapng flags, as tshark prints them (0x00000001): bits 0-1 the direction.
            return [r for r in rows if ports.get(r[0].replace("dpdk:", "")) == where and r[1]
                    and int(r[1], 16) & 3 == direction]
        inbound, outbound = 1, 2
        host_in = at("a.host", inbound)
        t.check(len(host_in) == len(frames), f"a's host RX: {len(host_in)} frames captured of {len(frames)}")
        firsts = {(r[3], r[4]) for r in at("a.fabric", outbound) if r[2] == "1" and int(r[5], 16) & 0x02 == 0}
        t.check(len(firsts) == len(frames), f"a's first DATA transmissions captured: {len(firsts)} of {len(frames)}")
        arrived = {(r[3], r[4]) for r in at("b.fabric", inbound) if r[2] == "1"}
        t.check(arrived == firsts, f"b's fabric RX has {len(arrived)} DATA, {len(firsts - arrived)} missing")
        print(f"OK: the config's capture holds all {len(frames)} host frames, {len(firsts)} first DATA "
              f"transmissions and their arrival at b ({len(rows)} packets in all; ports {ports})")


if __name__ == "__main__":
    sys.exit(main())
