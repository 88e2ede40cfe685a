"""An in-cast in one process: four sender instances into one receiver over
the emulated link (configs/app-incast.yaml; docs/app.md "An in-cast on the
link"). Each sender replays 3,000 host frames of 1,000 bytes to r; the link
serialises what it hands r at 100 Mb/s, so r's receiving port is the
bottleneck, and r paces its credits for it (congestion.cc credit,
docs/congestion.md "Receiver-paced credits": each turn to the flow granted
least). Expect every frame delivered once, and while all four send, each
sender 25% +- 3% of what r's port delivers (from the times in r's host
pcap). Shares follow the credits r grants, not timing, so they hold with 7
busy lcores on 2 shared cores.

usage: incast_test.py LAPS_BINARY CONFIG(configs/app-incast.yaml)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

SENDERS = 4
FRAMES = 3000


def main():
    laps, template = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        text = open(template).read()
        sent = {}
        for k in range(1, SENDERS + 1):
            flows = t.traffic(src=f"10.0.0.{k}", dst="10.0.0.5", udp_flows=2, udp_packets=FRAMES // 2, roce_qps=0,
                              roce_packets=0, size=1000)
            sent[k] = [f for _, f in flows]
            t.write_pcap(f"{tmp}/s{k}.pcap", sent[k])
            text = text.replace(f"/tmp/laps-incast-s{k}.pcap", f"{tmp}/s{k}.pcap")
        text = text.replace("/tmp/laps-incast-r-host.pcap", f"{tmp}/r_host.pcap")
        t.check(text.count(tmp) == SENDERS + 1, "configs/app-incast.yaml changed: update incast_test.py")
        with open(f"{tmp}/incast.yaml", "w") as f:
            f.write(text)
        rc, out, _, rep = t.run_laps(laps, f"{tmp}/incast.yaml", "incast", "0@0,1@1,2@1,3@0,4@1,5@0,6@1",
                                     timeout=150)
        t.check_no_leak(rep, rc)
        total = SENDERS * FRAMES
        t.check(rep["r.engine.data_delivered"] == total, f"r delivered {rep['r.engine.data_delivered']} of {total}")
        records = t.read_pcap_records(f"{tmp}/r_host.pcap")
        t.check(sorted(fr for _, fr in records) == sorted(fr for k in sent for fr in sent[k]),
                "r's host frames differ from what the senders replayed")
        sender_of = lambda frame: frame[29]  # the inner IPv4 source's last byte: 10.0.0.k
        # The window: from when every sender has 200 frames through (the
        # unscheduled bytes and the first credits behind them) to when r has
        # 3/4 of all: every sender still has frames to send throughout.
        seen = {k: 0 for k in sent}
        start = end = None
        for i, (ns, frame) in enumerate(records):
            seen[sender_of(frame)] += 1
            if start is None and min(seen.values()) >= 200:
                start = i
            if i + 1 == total * 3 // 4:
                end = i
                break
        t.check(start is not None and end is not None and start < end,
                f"no window with every sender active (frames per sender: {seen})")
        window = records[start + 1:end + 1]
        counts = {k: 0 for k in sent}
        for _, frame in window:
            counts[sender_of(frame)] += 1
        seconds = (window[-1][0] - records[start][0]) / 1e9
        rate = sum(len(fr) for _, fr in window) * 8 / seconds / 1e9
        shares = {k: counts[k] / len(window) for k in counts}
        print(f"window: {len(window)} frames in {seconds * 1e3:.1f} ms ({rate:.3f} Gb/s of host frames); shares " +
              ", ".join(f"s{k} {shares[k]:.3f}" for k in shares), flush=True)
        for k, share in shares.items():
            t.check(abs(share - 0.25) <= 0.03, f"s{k} had {share:.3f} of r's port while all four sent (25% +- 3%)")
        # r granted the credits, each sender sent on them, none was forged.
        t.check(rep["r.engine.credit_sent"] > 0, "r sent no CREDIT")
        for k in sent:
            t.check(rep[f"s{k}.engine.credit_taken"] > 0, f"s{k} took no credit")
            t.check(rep[f"s{k}.engine.credit_drop_beyond_request"] == 0, f"s{k} counted a credit as forged")
        t.check(rep["link.drop_no_route"] == 0, "the link found no instance for some packets")
        for k in sent:
            e = f"s{k}.engine."
            print(f"s{k}: DATA {rep[e + 'data_sent']}, resent {rep[e + 'data_resent']} (losses by gap "
                  f"{rep[e + 'loss_by_gap']}, by timeout {rep[e + 'loss_by_timeout']}; spurious "
                  f"{rep[e + 'loss_spurious']}), credits taken "
                  f"{rep[e + 'credit_taken']}, waits {rep[e + 'credit_wait']}, fallbacks {rep[e + 'credit_fallback']}")
        print(f"OK in-cast: {total} frames delivered, each sender 25% +- 3% of r's port "
              f"(credits {rep['r.engine.credit_sent']}, port queue drops "
              f"{sum(rep.get(f'link.s{k}_to_r.drop_port_full', 0) for k in sent)})")


if __name__ == "__main__":
    main()
