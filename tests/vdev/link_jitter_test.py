"""The emulated link's jitter reorders, and nothing else does (docs/app.md
"Two instances and a link").

Two instances on the link (configs/app-ring.yaml), a sending to b over one
path only (pid 0), b delivering in order. Without jitter the path is a FIFO:
b never holds a frame behind a gap (reorder_held_max at most 1). With jitter_us: 200 on
pid 0 (delay 50 us), packets overtake each other: b holds frames behind gaps
(reorder_held_max > 1; a frame in order passes through the buffer and counts
1) and still delivers every frame, in order per flow.

usage: link_jitter_test.py LAPS_BINARY CONFIG(configs/app-ring.yaml)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402


def run(laps, template, tmp, frames, flows, jitter):
    text = t.patient_reorder(t.ring_replay_text(template, tmp))
    one_path = text.replace("- {dst: 10.0.0.2, pids: [0, 1]}", "- {dst: 10.0.0.2, pids: [0]}")
    t.check(one_path != text, "configs/app-ring.yaml changed: a's PST row for 10.0.0.2")
    text = one_path
    if jitter:
        text = text.replace("- {pid: 0, delay_us: 50}", "- {pid: 0, delay_us: 50, jitter_us: 200}")
        t.check("jitter_us: 200" in text, "configs/app-ring.yaml changed: link pid 0")
    path = f"{tmp}/jitter-{jitter}.yaml"
    with open(path, "w") as f:
        f.write(text)
    rc, out, _, rep = t.run_laps(laps, path, f"jitter-{jitter}", "0@0,1@1,2@1,3@0", timeout=150)
    t.check_no_leak(rep, rc)
    t.check(rep["b.engine.data_delivered"] == len(frames), f"jitter {jitter}: b delivered "
            f"{rep['b.engine.data_delivered']} of {len(frames)}")
    host = t.read_pcap(f"{tmp}/b_host.pcap")
    t.check_no_gap_given_up(rep, f"jitter {jitter}")
    for flow in sorted({fl for fl, _ in flows}):
        sent = [fr for fl, fr in flows if fl == flow]
        s = set(sent)
        t.check([fr for fr in host if fr in s] == sent, f"jitter {jitter}: flow {flow} out of order at b's host")
    t.check(rep.get("a.path.1.data_sent", 0) == 0, "DATA on pid 1, which a's PST does not name")
    return rep


def main():
    laps, template = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        flows = t.traffic(udp_flows=4, udp_packets=250, roce_qps=0, roce_packets=0, size=1000)
        frames = [f for _, f in flows]
        t.write_pcap(f"{tmp}/a.pcap", frames)
        fifo = run(laps, template, tmp, frames, flows, False)
        t.check_few_resends(fifo, "one FIFO path", laps)
        # A frame is counted in the buffer as it passes through it: 1 is in order.
        t.check(fifo["b.engine.reorder_held_max"] <= 1,
                f"one path without jitter reordered: b held {fifo['b.engine.reorder_held_max']} frames for order")
        jittered = run(laps, template, tmp, frames, flows, True)
        t.check(jittered["b.engine.reorder_held_max"] > 1, "jitter_us 200 on a 50 us path reordered nothing")
        print(f"OK: one path, FIFO without jitter (held at most {fifo['b.engine.reorder_held_max']}); "
              f"with jitter b held up to "
              f"{jittered['b.engine.reorder_held_max']} frames for order and delivered all {len(frames)} in order")


if __name__ == "__main__":
    main()
