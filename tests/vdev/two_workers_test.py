"""Two workers on ports without RSS or rte_flow: the software steering path.

net_pcap has no RSS and no rte_flow, so laps must log the fallback: worker 0
reads the host queue and hands frames to worker 1 by flow hash; on the fabric
side worker 0 dispatches LAPS packets by the steering tag (the low 4 bits of
the UDP source port, fabric-wide; a tag t of worker w has t % 2 == w). A (2
workers, a TX pcap per worker) sends 16 UDP flows; B (2 workers) receives the
merged capture. Checks: each flow is sent by one worker only, with one tag
that names it; B's ACKs leave by the worker that the tag names (so they would
reach A's owning worker); no packet reached a worker its tag does not name;
B's host frames are A's input; no mbuf leaked.

usage: two_workers_test.py LAPS_BINARY
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402


def config(host, fabric, ip, run, pst_dst):
    return f"""
version: 1
ports:
  host:   {{devargs: "{host}"}}
  fabric: {{devargs: "{fabric}"}}
lcores: {{control: 0, workers: [1, 2], idle: yield}}
outer: {{ip: {ip}, next_hop_mac: "02:00:00:00:00:fe"}}
selection: {{probing: false}}
retransmit: {{min_timeout_us: 10000000}}
run: {run}
paths:
  pst:
    - {{dst: {pst_dst}, pids: [0, 1]}}
  pit:
    - {{pid: 0, base_ns: 10000}}
    - {{pid: 1, base_ns: 20000, anchors: [7]}}
"""


def main():
    laps = sys.argv[1]
    lcores = "0@0,1@1,2@1"
    with tempfile.TemporaryDirectory() as tmp:
        flows = t.traffic(udp_flows=16, udp_packets=8, roce_qps=0, roce_packets=0, size=300)
        frames = [f for _, f in flows]
        t.write_pcap(f"{tmp}/in.pcap", frames)
        with open(f"{tmp}/a.yaml", "w") as f:
            f.write(config(f"net_pcap0,rx_pcap={tmp}/in.pcap,tx_pcap={tmp}/ah0.pcap,tx_pcap={tmp}/ah1.pcap",
                           f"net_pcap1,tx_pcap={tmp}/af0.pcap,tx_pcap={tmp}/af1.pcap", "10.0.0.1",
                           f"{{max_packets: {len(frames)}, drain_ms: 2000}}", "10.0.0.2"))
        rc, out, _, rep = t.run_laps(laps, f"{tmp}/a.yaml", "two-workers-a", lcores)
        t.check_no_leak(rep, rc)
        t.check("steering: software: worker 0 reads the queue and dispatches by flow hash" in out,
                "host steering fallback not logged")
        t.check("steering: software (worker 0 dispatches LAPS packets by steering tag); rte_flow not used:" in out,
                "fabric steering fallback not logged")
        t.check(rep["laps.worker0.dispatch_host_out"] > 0, "worker 0 handed no frame to worker 1")
        owner = {}
        tag_of = {}
        merged = []
        for w in (0, 1):
            for fr in t.read_pcap(f"{tmp}/af{w}.pcap"):
                p = t.Laps(fr)
                merged.append(fr)
                tag = p.sport & 0xF
                t.check(tag % 2 == w, f"worker {w} sent source port {p.sport:#x}: tag {tag} names worker {tag % 2}")
                # The worker index tops the flow id (1 bit for 2 workers).
                t.check(p.flow_id >> 31 == w, f"worker {w} sent flow id {p.flow_id:#x}")
                t.check(owner.setdefault(p.flow_id, w) == w, f"flow {p.flow_id:#x} sent twice")
                t.check(tag_of.setdefault(p.flow_id, tag) == tag, f"flow {p.flow_id:#x} changed its tag")
        t.check(len(merged) == len(frames), f"{len(merged)} DATA for {len(frames)} frames")
        t.check(set(owner.values()) == {0, 1}, "one worker sent everything")
        t.check(len(owner) == 16, f"{len(owner)} flows for 16 UDP flows")
        t.write_pcap(f"{tmp}/b_in.pcap", merged)

        with open(f"{tmp}/b.yaml", "w") as f:
            f.write(config(f"net_pcap2,tx_pcap={tmp}/bh0.pcap,tx_pcap={tmp}/bh1.pcap",
                           f"net_pcap3,rx_pcap={tmp}/b_in.pcap,tx_pcap={tmp}/bf0.pcap,tx_pcap={tmp}/bf1.pcap",
                           "10.0.0.2", f"{{max_fabric_packets: {len(merged)}, drain_ms: 2000}}", "10.0.0.1"))
        rc, out, _, rep = t.run_laps(laps, f"{tmp}/b.yaml", "two-workers-b", lcores)
        t.check_no_leak(rep, rc)
        t.check(rep["laps.worker0.dispatch_fabric_out"] > 0, "worker 0 handed no LAPS packet to worker 1")
        t.check(rep["laps.engine.fabric_rx_wrong_worker"] == 0, "a DATA packet reached a worker its tag does not name")
        acks = 0
        for w in (0, 1):
            for fr in t.read_pcap(f"{tmp}/bf{w}.pcap"):
                a = t.Laps(fr)
                t.check(a.type == t.ACK, "B sent something else than an ACK")
                t.check((a.sport & 0xF) % 2 == w, f"B worker {w} answered a DATA of tag {a.sport & 0xF}")
                acks += 1
        t.check(acks == len(merged), f"{acks} ACKs for {len(merged)} DATA")
        host = t.read_pcap(f"{tmp}/bh0.pcap") + t.read_pcap(f"{tmp}/bh1.pcap")
        t.check(sorted(host) == sorted(frames), "B's host frames differ from A's input")
        print(f"OK: {len(frames)} frames over 2+2 workers, software steering both sides, {acks} ACKs by tag")


if __name__ == "__main__":
    main()
