"""The full LAPS path on two workers (configs/app-loop-2w.yaml), and a console
`path 1 down` seen by every worker within one loop iteration.

Host: net_pcap with one rx_pcap per worker, replayed forever; fabric: the
loop-back net_ring vdev, each worker's DATA and ACKs back on its own queue
(steering.fabric: queues). Each worker's engine takes host frames, sends
DATA, takes its own DATA as the receiver, ACKs and delivers it, and takes
the ACKs: the report's laps.worker<w>.engine.* counts all of it per worker,
and no packet reaches a worker its steering tag does not name.

The console edits the instance's shared PIT once and returns after an RCU
grace period (every worker reports a quiescent state once per loop
iteration). So from the `show paths stats` right after `path 1 down` to the
end of the run, pid 1's DATA count must not move, on either worker (the
report's per-worker counts sum to it), while both workers had used pid 1
before and traffic goes on on pid 0. Paced by `wait <n> packets`, not by time.

usage: loop_workers_test.py LAPS_BINARY CONFIG(configs/app-loop-2w.yaml)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

SCRIPT = """\
wait 20000 packets
path 1 down
show paths stats
wait 20000 packets
show paths stats
quit
"""


def main():
    laps, template = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        # Each file holds whole flows: 4 UDP flows each, other sources.
        for w, src in ((0, "10.1.0.1"), (1, "10.1.0.2")):
            flows = t.traffic(src=src, udp_flows=4, udp_packets=16, roce_qps=0, roce_packets=0, size=982)
            t.write_pcap(f"{tmp}/loop-{w}.pcap", [f for _, f in flows])
        with open(template) as f:
            text = f.read()
        text = text.replace("/tmp/laps-loop-0.pcap", f"{tmp}/loop-0.pcap").replace(
            "/tmp/laps-loop-1.pcap", f"{tmp}/loop-1.pcap")
        text = text.replace("run: {duration_ms: 3000}", "run: {duration_ms: 200000}")
        text = text.replace("stats: {interval_ms: 1000}", "stats: {interval_ms: 0}")
        with open(f"{tmp}/loop.yaml", "w") as f:
            f.write(text)
        out, rep = t.run_script(laps, f"{tmp}/loop.yaml", "loop-workers", "0@0,1@0,2@1", SCRIPT, tmp, timeout=220)
        t.check("steering: queues: worker i reads RX queue i (each flow stays on one queue)" in out,
                "host steering by queue not logged")
        t.check("steering: queues: worker i reads RX queue i, the device delivers by steering tag % 2" in out,
                "fabric steering by queue not logged")

        # The full path on both workers.
        for w in (0, 1):
            for counter in ("host_rx", "data_sent", "data_rx", "ack_sent", "ack_rx", "data_delivered"):
                t.check(rep.get(f"laps.worker{w}.engine.{counter}", 0) > 0, f"worker {w}: engine.{counter} is 0")
        t.check(rep["laps.engine.fabric_rx_wrong_worker"] == 0, "a packet reached a worker its tag does not name")
        t.check(rep["laps.engine.data_drop_beyond_window"] == 0, "DATA beyond a receiver window")

        # path 1 down: frozen from the command's return, on every worker.
        tables = t.path_tables(out)
        t.check(len(tables) == 2, f"{len(tables)} `show paths stats` answers")
        after_down, later = tables
        t.check(later[1] == after_down[1], f"pid 1 DATA went on after `path 1 down` returned: "
                f"{after_down[1]} then {later[1]}")
        t.check(later[0] >= after_down[0] + 10000, f"pid 0 did not carry the traffic: {after_down[0]} -> {later[0]}")
        t.check(rep.get("laps.path.1.data_sent", 0) == after_down[1],
                f"pid 1 DATA at the end {rep.get('laps.path.1.data_sent', 0)}, at `path 1 down` {after_down[1]}")
        per_worker = [rep.get(f"laps.worker{w}.path.1.data_sent", 0) for w in (0, 1)]
        t.check(all(n > 0 for n in per_worker), f"a worker never used pid 1 before it went down: {per_worker}")
        t.check(sum(per_worker) == after_down[1], f"per-worker pid 1 DATA {per_worker} != {after_down[1]}")
        print(f"OK: 2 workers, {rep['laps.engine.host_rx']} host frames through the full LAPS loop "
              f"({rep['laps.worker0.engine.host_rx']} + {rep['laps.worker1.engine.host_rx']}); pid 1 frozen at "
              f"{after_down[1]} DATA ({per_worker[0]} + {per_worker[1]}) from `path 1 down` on")


if __name__ == "__main__":
    main()
