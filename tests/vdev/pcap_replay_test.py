"""net_pcap replay through one laps (sender side), checked field by field.

Host traffic: UDP flows and RoCEv2 QPs to 10.0.0.2 (a PST destination with
two paths, one with anchors), one UDP frame to a destination not in the PST,
one ARP frame. Expect on the fabric pcap: one LAPS DATA per IP frame to
10.0.0.2 with the configured outer headers, pids of the PST, the pid's
anchors, per-flow ids and sequence numbers from 0, and the host frame
untouched; the other two frames passed through unchanged. No mbuf leaked.

usage: pcap_replay_test.py LAPS_BINARY
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

PIT = {0: [], 1: [70, 71]}


def config(tmp, frames):
    return f"""
version: 1
{t.replay_ports(tmp)}outer: {{ip: 10.0.0.1, mac: "02:00:00:00:00:01", next_hop_mac: "02:00:00:00:00:fe", udp_port: {t.LAPS_PORT}, mtu: 1500}}
engine: {{unknown_destination: pass, burst: 4}}   # many TX bursts: stamping is checked per burst
selection: {{probing: false}}
retransmit: {{min_timeout_us: 10000000}}   # no resends within the run: no ACKs come back
run: {{max_packets: {frames}, drain_ms: 2000}}
""" + t.TWO_PATHS


# docs/app.md "Timestamps": a DATA's time is read from the clock
# immediately before the TX burst that sends it, one read per burst. net_pcap
# records each packet with the same cycle counter as it writes it, so for
# the first packet of each burst (packets sharing a stamp), record time -
# stamp = a constant (the two clocks' origins) + the gap between the stamp
# and the burst. Its spread over bursts must stay within the documented
# bound, 2 us; one burst in ten may exceed it: the first burst pays the
# driver's cold start (measured here: 40-50 us before net_pcap's first TX
# call records its first packet), and a shared machine may preempt the lcore.
# Under qemu-user (tools/test-arm64) the first run of each code path is
# translated before it runs, and the emulator's own work lands between stamp
# and record for more bursts (CI once had 17 of 20 within the bound): there
# the bound must hold for at least half the bursts. That still fails a stamp
# whose distance to its TX burst varies for most bursts (read where frames
# wait, not at the burst); a constant offset cancels out here, natively too.
STAMP_BOUND_NS = 2000


def check_stamped_at_the_wire(records, emulated):
    firsts = {}
    for ts, frame in records:
        if t.is_laps(frame):
            p = t.Laps(frame)
            if p.type == 1:
                firsts.setdefault(p.time, ts)
    gaps = sorted(ts - stamp for stamp, ts in firsts.items())
    t.check(len(gaps) >= 2, f"{len(gaps)} DATA bursts: the replay should need several")
    within = sum(1 for g in gaps if g - gaps[0] <= STAMP_BOUND_NS)
    print(f"stamp to pcap record over {len(gaps)} bursts: spread {gaps[-1] - gaps[0]} ns, "
          f"{within} within {STAMP_BOUND_NS} ns of the closest")
    share, share_text = ((1, 2), "half") if emulated else ((9, 10), "nine in ten")
    t.check(within * share[1] >= len(gaps) * share[0], f"only {within} of {len(gaps)} bursts stamped within "
            f"{STAMP_BOUND_NS} ns of their TX burst (at least {share_text} must be"
            f"{', under emulation' if emulated else ''})")


# docs/app.md "Start, stop and the report": run.idle_ms stops a run whose fabric never answers, and
# says that laps was holding the host port back, so the frames it left unread
# are not taken for the end of the input. The frames it took are accounted.
def check_idle_stop_under_backpressure(laps, tmp):
    frames = [t.udp_frame("10.0.0.1", "10.0.0.2", 1000, 2000, t.payload_for(0, i, 200)) for i in range(200)]
    t.write_pcap(f"{tmp}/in.pcap", frames)
    text = config(tmp, len(frames)).replace(f"run: {{max_packets: {len(frames)}, drain_ms: 2000}}",
                                            "run: {idle_ms: 300, drain_ms: 100}")
    text = text.replace("retransmit: {min_timeout_us: 10000000}",
                        "retransmit: {min_timeout_us: 10000000, window_packets: 16}\n"
                        "engine: {unknown_destination: pass, flow_queue_packets: 16}")
    text = text.replace("engine: {unknown_destination: pass, burst: 4}", "")
    with open(f"{tmp}/idle.yaml", "w") as f:
        f.write(text)
    rc, out, _, rep = t.run_laps(laps, f"{tmp}/idle.yaml", "pcap-idle")
    t.check_no_leak(rep, rc)
    t.check("stopped: run.idle_ms" in out and "held the host port back" in out,
            "the idle stop does not say laps was backpressuring:\n" + out[-2000:])
    t.check(rep["laps.engine.data_sent"] == 16, f"data_sent {rep['laps.engine.data_sent']}: the window is 16")
    t.check(rep["laps.engine.host_rx"] < len(frames), "every frame was taken: no backpressure to report")
    print(f"OK: idle stop under backpressure reported; {rep['laps.engine.host_rx']} of {len(frames)} frames taken")


def main():
    laps = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        check_idle_stop_under_backpressure(laps, tmp)
    with tempfile.TemporaryDirectory() as tmp:
        flows = t.traffic(udp_flows=3, udp_packets=20, roce_qps=2, roce_packets=10, size=200)
        unknown = t.udp_frame("10.0.0.1", "10.9.9.9", 1234, 5678, b"unknown destination")
        arp = t.arp_frame()
        frames = [f for _, f in flows] + [unknown, arp]
        t.write_pcap(f"{tmp}/in.pcap", frames)
        with open(f"{tmp}/laps.yaml", "w") as f:
            f.write(config(tmp, len(frames)))
        rc, out, err, rep = t.run_laps(laps, f"{tmp}/laps.yaml", "pcap-replay")
        t.check_no_leak(rep, rc)
        t.check(rep["laps.engine.host_rx"] == len(frames), "host_rx %d != %d" % (rep["laps.engine.host_rx"], len(frames)))
        t.check(rep["laps.engine.data_sent"] == len(flows), "data_sent %d != %d" % (rep["laps.engine.data_sent"], len(flows)))
        t.check(rep["laps.engine.host_passthrough_non_ip"] == 1, "ARP not passed through")
        t.check(rep["laps.engine.host_passthrough_unknown_dst"] == 1, "unknown destination not passed through")

        check_stamped_at_the_wire(t.read_pcap_records(f"{tmp}/fabric_out.pcap"), t.emulated(laps))
        out_frames = t.read_pcap(f"{tmp}/fabric_out.pcap")
        laps_frames = [t.Laps(f) for f in out_frames if t.is_laps(f)]
        others = [f for f in out_frames if not t.is_laps(f)]
        t.check(sorted(others) == sorted([unknown, arp]), "passthrough frames changed or missing")
        t.check(len(laps_frames) == len(flows), f"{len(laps_frames)} LAPS packets for {len(flows)} frames")

        by_frame = {}
        for flow, fr in flows:
            by_frame.setdefault(fr, []).append(flow)
        seqs = {}
        flow_of_id = {}
        pids = {0: 0, 1: 0}
        for p in laps_frames:
            t.check(p.eth_dst == t.mac("02:00:00:00:00:fe"), "outer eth dst is not next_hop_mac")
            t.check(p.eth_src == t.mac("02:00:00:00:00:01"), "outer eth src is not outer.mac")
            t.check(p.ver_ihl == 0x45 and p.ip_frag == 0x4000 and p.ttl == 64, "outer IPv4 header fields")
            t.check(p.ip_csum_ok, "outer IPv4 checksum")
            t.check(p.src_ip == t.ip4("10.0.0.1") and p.dst_ip == t.ip4("10.0.0.2"), "outer addresses")
            t.check(p.tos == 0x02, f"DATA tos {p.tos:#x}, expected ECT(0)")
            t.check(p.ip_len == len(p.frame) - 14 and p.udp_len == len(p.frame) - 34, "outer lengths")
            t.check(p.sport & 0xC000 == 0xC000, f"source port {p.sport:#x} not in 0xC000 | entropy")
            t.check(p.version == t.LAPS_VERSION and p.type == t.DATA and p.flags == 0, "LAPS version/type/flags")
            t.check(p.pid in PIT, f"pid {p.pid} is not a PST pid of 10.0.0.2")
            t.check(p.anchors == PIT[p.pid] and p.anchor_index == 0, f"pid {p.pid}: anchors {p.anchors}")
            t.check(p.inner_length == len(p.inner), "inner_length")
            # No ACK comes back in a replay: the oldest unacknowledged
            # sequence stays 0, so the window offset is the sequence itself.
            t.check(p.window_offset == p.seq, f"window_offset {p.window_offset} for seq {p.seq}")
            t.check(p.inner in by_frame, "inner frame is not a host frame byte for byte")
            flow = by_frame[p.inner][0]
            t.check(flow_of_id.setdefault(p.flow_id, flow) == flow, "one flow_id for two flows")
            seqs.setdefault(flow, []).append(p.seq)
            pids[p.pid] += 1
        t.check(len(flow_of_id) == 5, f"{len(flow_of_id)} flow ids for 3 UDP flows and 2 RoCEv2 QPs")
        for flow, s in seqs.items():
            t.check(s == list(range(len(s))), f"flow {flow}: sequence numbers {s}")
        t.check(pids[0] + pids[1] == len(flows), "pid counts")
        for pid, n in pids.items():
            t.check(rep.get(f"laps.path.{pid}.data_sent", 0) == n, f"laps.path.{pid}.data_sent != {n}")
        print(f"OK: {len(laps_frames)} DATA (pid 0: {pids[0]}, pid 1: {pids[1]}), 2 passed through")


if __name__ == "__main__":
    main()
