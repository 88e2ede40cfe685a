"""One flow, one owner, whatever the worker counts (docs/app.md "Lcores and
steering"): the two-instance net_ring link of configs/app-ring.yaml with a
on 1, 2, 3 workers and b on 1, 2, 3.

For each pair (1->2, 2->1, 2->3, 3->2): a sends 16 UDP flows to b, which
delivers them in order (in_order) to one host pcap per worker. Every frame
arrives exactly once, each flow at one b worker and in order there, no DATA
falls beyond a receiver window (the symptom of a flow split over workers),
no packet reaches a worker its steering tag does not name, every b worker
with flows takes DATA, every a worker takes ACKs, and no mbuf is leaked in
any of the five pools. Short runs: CI has two cores for up to eight lcores.

usage: ring_workers_test.py LAPS_BINARY CONFIG(configs/app-ring.yaml)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

FLOWS = 16
PACKETS = 40


def config(template, tmp, a_workers, b_workers):
    with open(template) as f:
        text = f.read()
    # lcores: 0 control, then a's workers, then b's, then the link.
    a_lcores = list(range(1, 1 + a_workers))
    b_lcores = list(range(1 + a_workers, 1 + a_workers + b_workers))
    link = 1 + a_workers + b_workers
    a_tx = ",".join(f"tx_pcap={tmp}/a_host{w}.pcap" for w in range(a_workers))
    b_tx = ",".join(f"tx_pcap={tmp}/b_host{w}.pcap" for w in range(b_workers))
    text = text.replace('"net_pcap0,rx_pcap=/tmp/laps-ring-a.pcap"', f'"net_pcap0,rx_pcap={tmp}/a.pcap,{a_tx}"')
    text = text.replace('"net_pcap1,tx_pcap=/tmp/laps-ring-b-host.pcap"', f'"net_pcap1,{b_tx}"')
    text = text.replace("lcores: {workers: [1]}", f"lcores: {{workers: {a_lcores}}}")
    text = text.replace("lcores: {workers: [2]}", f"lcores: {{workers: {b_lcores}}}")
    text = text.replace("  lcore: 3\n", f"  lcore: {link}\n")
    text = text.replace("run: {idle_ms: 2000, duration_ms: 60000}", "run: {idle_ms: 1000, duration_ms: 60000}")
    text = text.replace("stats: {interval_ms: 1000}", "stats: {interval_ms: 0}")
    text = t.patient_reorder(text)
    path = f"{tmp}/ring-{a_workers}-{b_workers}.yaml"
    with open(path, "w") as f:
        f.write(text)
    # Two cores: lcores alternate between them (idle: yield in the config).
    lcores = ",".join(f"{l}@{l % 2}" for l in range(link + 1))
    return path, lcores


def run(laps, template, tmp, a_workers, b_workers, flows):
    frames = [f for _, f in flows]
    for name in os.listdir(tmp):
        if name.startswith("b_host") or name.startswith("a_host"):
            os.unlink(f"{tmp}/{name}")
    path, lcores = config(template, tmp, a_workers, b_workers)
    rc, out, _, rep = t.run_laps(laps, path, f"ring-{a_workers}-{b_workers}", lcores, timeout=150)
    what = f"{a_workers}->{b_workers}"
    t.check_no_leak(rep, rc)
    t.check("stopped: run.idle_ms" in out, f"{what}: the run did not end by idle_ms (not all ACKed?)")
    for side in ("a", "b"):
        t.check(rep[f"{side}.engine.data_drop_beyond_window"] == 0,
                f"{what}: {side} dropped {rep[f'{side}.engine.data_drop_beyond_window']} DATA beyond its window "
                "(a flow split over workers)")
        t.check(rep[f"{side}.engine.fabric_rx_wrong_worker"] == 0, f"{what}: {side}: packets at the wrong worker")
    t.check(rep["b.engine.data_delivered"] == len(frames),
            f"{what}: b delivered {rep['b.engine.data_delivered']} of {len(frames)}")
    t.check(rep["b.engine.data_drop_duplicate"] + len(frames) == rep["b.engine.data_rx"],
            f"{what}: b's DATA: {rep['b.engine.data_rx']} received, {len(frames)} delivered, "
            f"{rep['b.engine.data_drop_duplicate']} duplicates: some other drop")
    per_worker = [t.read_pcap(f"{tmp}/b_host{w}.pcap") for w in range(b_workers)]
    t.check(sorted(f for host in per_worker for f in host) == sorted(frames), f"{what}: b's host frames differ")
    t.check_no_gap_given_up(rep, what)
    t.check_few_resends(rep, what, laps)
    owner = {}
    for flow in range(FLOWS):
        sent = [fr for fl, fr in flows if fl == flow]
        s = set(sent)
        holders = [w for w, host in enumerate(per_worker) if any(fr in s for fr in host)]
        t.check(len(holders) == 1, f"{what}: flow {flow} delivered by b workers {holders}")
        owner[flow] = holders[0]
        t.check([fr for fr in per_worker[holders[0]] if fr in s] == sent, f"{what}: flow {flow} out of order")
    if b_workers > 1:
        for w in range(b_workers):
            t.check(rep.get(f"b.worker{w}.engine.data_rx", 0) > 0, f"{what}: b worker {w} took no DATA")
    if a_workers > 1:
        for w in range(a_workers):
            t.check(rep.get(f"a.worker{w}.engine.ack_rx", 0) > 0, f"{what}: a worker {w} took no ACK")
    spread = [sum(1 for o in owner.values() if o == w) for w in range(b_workers)]
    print(f"OK {what}: {len(frames)} frames once and in order; flows per b worker {spread}; "
          f"a resent {rep['a.engine.data_resent']}, b dropped {rep['b.engine.data_drop_duplicate']} duplicates")


def main():
    laps, template = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        flows = t.traffic(udp_flows=FLOWS, udp_packets=PACKETS, roce_qps=0, roce_packets=0, size=1000)
        t.write_pcap(f"{tmp}/a.pcap", [f for _, f in flows])
        for a_workers, b_workers in ((1, 2), (2, 1), (2, 3), (3, 2)):
            run(laps, template, tmp, a_workers, b_workers, flows)


if __name__ == "__main__":
    main()
