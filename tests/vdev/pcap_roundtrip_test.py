"""Round trip through two laps instances over pcaps, and the reverse direction.

A (10.0.0.1) replays host traffic (UDP flows, RoCEv2 QPs, a frame to an
unknown destination, an ARP frame) into its fabric pcap. B (10.0.0.2) replays
A's fabric pcap from its fabric port: B's host pcap must give back A's input
frames byte for byte (per flow in order), and B's fabric pcap must hold one
ACK per DATA: type ACK, pid, flow id and sequence echoed, reversed anchors,
sent back to 10.0.0.1 on the DATA's entropy (UDP source port), expedited
DSCP. With in_order on B. Both runs end with every mbuf back in its pool.

usage: pcap_roundtrip_test.py LAPS_BINARY
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

TABLES_A = """
paths:
  pst:
    - {dst: 10.0.0.2, pids: [0, 1]}
  pit:
    - {pid: 0, base_ns: 10000, uncongested_ns: 6000}
    - {pid: 1, base_ns: 15000, uncongested_ns: 9000, anchors: [70, 71, 72]}
"""
TABLES_B = """
paths:
  pst:
    - {dst: 10.0.0.1, pids: [0]}
  pit:
    - {pid: 0, base_ns: 10000}
"""


def config(host, fabric, ip, mac, run, tables, extra=""):
    return f"""
version: 1
ports:
  host:   {{devargs: "{host}"}}
  fabric: {{devargs: "{fabric}"}}
lcores: {{control: 0, workers: [1]}}
outer: {{ip: {ip}, mac: "{mac}", next_hop_mac: "02:00:00:00:00:fe"}}
selection: {{probing: false}}
retransmit: {{min_timeout_us: 10000000}}
run: {run}
{extra}
{tables}
"""


def main():
    laps = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        flows = t.traffic(udp_flows=3, udp_packets=30, roce_qps=2, roce_packets=15, size=700)
        extra = [t.udp_frame("10.0.0.1", "10.9.9.9", 1234, 5678, b"unknown destination"), t.arp_frame()]
        frames = [f for _, f in flows] + extra
        t.write_pcap(f"{tmp}/a_in.pcap", frames)

        with open(f"{tmp}/a.yaml", "w") as f:
            f.write(config(f"net_pcap0,rx_pcap={tmp}/a_in.pcap,tx_pcap={tmp}/a_host.pcap",
                           f"net_pcap1,tx_pcap={tmp}/a_fabric.pcap", "10.0.0.1", "02:00:00:00:00:01",
                           f"{{max_packets: {len(frames)}, drain_ms: 2000}}", TABLES_A))
        rc, _, _, rep = t.run_laps(laps, f"{tmp}/a.yaml", "roundtrip-a")
        t.check_no_leak(rep, rc)
        a_out = t.read_pcap(f"{tmp}/a_fabric.pcap")
        t.check(len(a_out) == len(frames), f"A sent {len(a_out)} packets for {len(frames)} frames")
        data = [t.Laps(f) for f in a_out if t.is_laps(f)]

        # B: the reverse direction, fabric pcap in, host pcap out.
        with open(f"{tmp}/b.yaml", "w") as f:
            f.write(config(f"net_pcap2,tx_pcap={tmp}/b_host.pcap",
                           f"net_pcap3,rx_pcap={tmp}/a_fabric.pcap,tx_pcap={tmp}/b_fabric.pcap",
                           "10.0.0.2", "02:00:00:00:00:02", f"{{max_fabric_packets: {len(a_out)}, drain_ms: 2000}}",
                           TABLES_B, "engine: {in_order: true}"))
        rc, _, _, rep = t.run_laps(laps, f"{tmp}/b.yaml", "roundtrip-b")
        t.check_no_leak(rep, rc)
        t.check(rep["laps.engine.data_delivered"] == len(flows), "B delivered %d of %d" %
                (rep["laps.engine.data_delivered"], len(flows)))
        t.check(rep["laps.engine.fabric_passthrough_foreign"] == len(extra), "foreign frames not passed to the host")

        b_host = t.read_pcap(f"{tmp}/b_host.pcap")
        t.check(sorted(b_host) == sorted(frames), "B's host frames differ from A's input")
        for flow in {fl for fl, _ in flows}:
            sent = [fr for fl, fr in flows if fl == flow]
            got = [fr for fr in b_host if fr in set(sent)]
            t.check(got == sent, f"flow {flow}: frames out of order at B's host port")

        acks = [t.Laps(f) for f in t.read_pcap(f"{tmp}/b_fabric.pcap") if t.is_laps(f)]
        t.check(len(acks) == len(data), f"{len(acks)} ACKs for {len(data)} DATA")
        by_key = {(d.flow_id, d.seq): d for d in data}
        for a in acks:
            t.check(a.type == t.ACK and a.version == t.LAPS_VERSION, "ACK type")
            d = by_key.get((a.flow_id, a.seq))
            t.check(d is not None, f"ACK for unknown (flow {a.flow_id:#x}, seq {a.seq})")
            t.check(a.pid == d.pid, "ACK pid is not the DATA's")
            t.check(a.anchors == list(reversed(d.anchors)) and a.anchor_index == 0, "ACK anchors not reversed")
            t.check(a.sport == d.sport, "ACK entropy is not the DATA's")
            t.check(a.src_ip == t.ip4("10.0.0.2") and a.dst_ip == t.ip4("10.0.0.1"), "ACK addresses")
            t.check(a.tos >> 2 == 46, f"ACK DSCP {a.tos >> 2}, expected 46 (EF)")
            t.check(a.inner_length == 0 and not a.inner, "ACK carries a frame")
            t.check(a.ip_csum_ok, "ACK IPv4 checksum")
        print(f"OK: {len(frames)} frames through A and B, {len(acks)} ACKs checked")


if __name__ == "__main__":
    main()
