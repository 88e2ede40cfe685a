"""What laps does with each class of host frame (docs/app.md
"Host frames"): a mixed capture (UDP, 802.1Q, QinQ, IPv6, fragments, 1,514
and 9,014-byte frames, ARP, LLDP, IPv6 neighbour discovery) replayed through
laps on net_pcap, once with the defaults and once with jumbo fabric frames
and local frames dropped. Every frame is accounted for by a named counter
and the fabric capture holds exactly what the counters say.

usage: host_classes_test.py LAPS_BINARY
"""
import os
import socket
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

A_MAC, B_MAC = t.mac("02:00:00:00:00:02"), t.mac("02:00:00:00:00:01")


def ipv6_frame(src, dst, next_header, payload, dst_mac=A_MAC):
    hdr = struct.pack("!IHBB16s16s", 0x60000000, len(payload), next_header, 64,
                      socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst))
    return dst_mac + B_MAC + b"\x86\xdd" + hdr + payload


def tagged(frame, *tags):
    """`frame` with VLAN tags [(tpid, tci), ...] inserted after the MACs, outermost first."""
    return frame[:12] + b"".join(struct.pack("!HH", tpid, tci) for tpid, tci in tags) + frame[12:]


def fragment(ident, offset8, more, payload):
    flags = (0x2000 if more else 0) | offset8
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, flags, 64, 17, 0,
                      t.ip4("10.0.0.1"), t.ip4("10.0.0.2"))
    hdr = hdr[:10] + struct.pack("!H", t.checksum(hdr)) + hdr[12:]
    return A_MAC + B_MAC + b"\x08\x00" + hdr + payload


def udp_of_length(length, sport):
    """An IPv4/UDP frame of exactly `length` bytes (without FCS)."""
    return t.udp_frame("10.0.0.1", "10.0.0.2", sport, 9000, b"x" * (length - 42))


# class name -> frames; what each becomes is decided per run below.
CLASSES = {
    "udp": [t.udp_frame("10.0.0.1", "10.0.0.2", 1000 + i, 9000, b"udp %d" % i) for i in range(3)],
    "vlan": [tagged(t.udp_frame("10.0.0.1", "10.0.0.2", 2000, 9000, b"802.1Q"), (0x8100, 7))],
    "qinq": [tagged(t.udp_frame("10.0.0.1", "10.0.0.2", 3000, 9000, b"QinQ"), (0x88A8, 5), (0x8100, 7))],
    "ipv6": [ipv6_frame("fd00::1", "fd00::2", 17, struct.pack("!HHHH", 4000, 9000, 14, 0) + b"ipv6!!")],
    "fragments": [fragment(77, 0, True, b"f" * 64), fragment(77, 8, False, b"g" * 40)],
    "full_size": [udp_of_length(1514, 5000)],
    "jumbo": [udp_of_length(9014, 6000)],
    "arp": [t.arp_frame()],
    "lldp": [b"\x01\x80\xc2\x00\x00\x0e" + B_MAC + b"\x88\xcc" + b"\x02\x07\x04" + B_MAC + b"\x00" * 40],
    "neighbour_discovery": [ipv6_frame("fe80::1", "ff02::1:ff00:2", 58, b"\x87\x00" + b"\x00" * 22,
                                       dst_mac=t.mac("33:33:ff:00:00:02"))],
}


def config(tmp, frames, extra):
    return f"""
version: 1
{t.replay_ports(tmp)}outer: {{ip: 10.0.0.1, mac: "02:00:00:00:00:01", next_hop_mac: "02:00:00:00:00:fe"{extra.get("outer", "")}}}
engine: {{{extra.get("engine", "unknown_destination: pass")}}}
mempool: {{mbufs: 4095}}
selection: {{probing: false}}
retransmit: {{min_timeout_us: 10000000}}
run: {{max_packets: {frames}, drain_ms: 2000}}
paths:
  pst:
    - {{dst: 10.0.0.2, pids: [0]}}
    - {{dst: fd00::2, fabric_ip: 10.0.0.2, pids: [1]}}
  pit:
    - {{pid: 0, base_ns: 10000}}
    - {{pid: 1, base_ns: 10000}}
"""


def run(laps, tmp, name, extra, expect):
    frames = [f for fs in CLASSES.values() for f in fs]
    t.write_pcap(f"{tmp}/in.pcap", frames)
    with open(f"{tmp}/laps.yaml", "w") as f:
        f.write(config(tmp, len(frames), extra))
    rc, out, err, rep = t.run_laps(laps, f"{tmp}/laps.yaml", name)
    t.check_no_leak(rep, rc)
    counted = {}
    for cls, outcome in expect.items():
        counted[outcome] = counted.get(outcome, 0) + len(CLASSES[cls])
    t.check(rep["laps.engine.host_rx"] == len(frames), f"host_rx {rep['laps.engine.host_rx']} != {len(frames)}")
    for counter, n in counted.items():
        got = rep.get(f"laps.engine.{counter}", 0)
        t.check(got == n, f"{name}: {counter} = {got}, expected {n} "
                f"({', '.join(c for c, o in expect.items() if o == counter)})")
    fabric = t.read_pcap(f"{tmp}/fabric_out.pcap")
    data = [t.Laps(f) for f in fabric if t.is_laps(f)]
    plain = sorted(f for f in fabric if not t.is_laps(f))
    want_plain = sorted(f for cls, o in expect.items() if o.startswith("host_passthrough") for f in CLASSES[cls])
    want_inner = sorted(f for cls, o in expect.items() if o == "data_sent" for f in CLASSES[cls])
    t.check(plain == want_plain, f"{name}: {len(plain)} frames passed unchanged, expected {len(want_plain)}")
    t.check(sorted(p.inner for p in data) == want_inner,
            f"{name}: {len(data)} DATA packets, expected the {len(want_inner)} sprayable frames, untouched inside")
    return out


def main():
    laps = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        defaults = {
            "udp": "data_sent", "vlan": "data_sent", "qinq": "data_sent", "ipv6": "data_sent",
            "fragments": "data_sent", "full_size": "host_drop_oversize", "jumbo": "host_drop_oversize",
            "arp": "host_passthrough_non_ip", "lldp": "host_passthrough_non_ip",
            "neighbour_discovery": "host_passthrough_link_local",
        }
        out = run(laps, tmp, "host-classes-defaults", {}, defaults)
        # Full-size frames do not fit the default 1500-byte fabric MTU: said once at start.
        warnings = [line for line in out.splitlines() if "warning:" in line and "MTU" in line]
        t.check(len(warnings) == 1, f"{len(warnings)} MTU warnings at start-up, expected 1")
        t.check("outer.mtu to 1586" in warnings[0], f"the warning does not give the fix: {warnings[0]!r}")

        jumbo = dict(defaults, full_size="data_sent", jumbo="data_sent", arp="host_drop_non_ip",
                     lldp="host_drop_non_ip", neighbour_discovery="host_drop_link_local")
        out = run(laps, tmp, "host-classes-jumbo",
                  {"outer": ", mtu: 9100", "engine": "non_ip: drop, link_local: drop"}, jumbo)
        t.check(not any("warning:" in line and "MTU" in line for line in out.splitlines()),
                "an MTU warning although 9100 fits")
    print("ok: every class of host frame has its outcome and its counter")
    return 0


if __name__ == "__main__":
    sys.exit(main())
