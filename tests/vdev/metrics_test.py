"""The Prometheus endpoint (docs/telemetry.md "Metrics") of two instances on
a live link (configs/app-ring.yaml plus `metrics: {listen: 127.0.0.1:0}`):
scraped over HTTP like Prometheus does, validated by Prometheus' own
`promtool check metrics` (Debian package prometheus, installed by
tools/setup), and checked for the figures an operator queries: DATA per
path, drops by reason, ports, mempools, with the labels instance, worker,
pid and reason. Also: 404 and 405 answers, the OpenMetrics form on Accept,
and a client that never finishes its request does not block a scrape.

usage: metrics_test.py LAPS_BINARY CONFIG(configs/app-ring.yaml)
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')


def parse(text):
    """{(name, frozenset(labels)): value} and the families' TYPE lines."""
    samples, types, helps = {}, {}, set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
        elif line.startswith("# HELP "):
            helps.add(line.split(" ", 3)[2])
        elif line and not line.startswith("#"):
            m = SAMPLE.match(line)
            t.check(m, f"not a sample line: {line!r}")
            labels = frozenset(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
            samples[(m.group(1), labels)] = float(m.group(3))
    return samples, types, helps


def value(samples, name, **labels):
    want = set(labels.items())
    found = [v for (n, ls), v in samples.items() if n == name and want <= set(ls)]
    t.check(found, f"no sample {name} {labels}")
    return sum(found)


def get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


def main():
    laps, template = sys.argv[1], sys.argv[2]
    promtool = shutil.which("promtool")
    t.check(promtool, "promtool not found: install Debian's prometheus package (tools/setup does)")
    with tempfile.TemporaryDirectory() as tmp:
        config = t.live_ring_config(template, tmp)
        with open(config, "a") as f:
            f.write('metrics: {listen: "127.0.0.1:0"}\n')
        p, out = t.start_laps(laps, config, "metrics", "0@0,1@1,2@1,3@0")
        try:
            def serving():
                with open(out) as f:
                    m = re.search(r"metrics: serving http://127\.0\.0\.1:(\d+)/metrics", f.read())
                return m and int(m.group(1))
            t.wait_for(serving, 30, "the metrics endpoint")
            base = f"http://127.0.0.1:{serving()}"

            # A client that sends half a request and waits: the server must
            # go on answering others.
            slow = socket.create_connection(("127.0.0.1", serving()))
            slow.sendall(b"GET /metr")

            def delivering():
                _, _, text = get(base + "/metrics")
                s, _, _ = parse(text)
                return value(s, "laps_engine_data_delivered_total", instance="b") > 500
            t.wait_for(delivering, 60, "b delivering a's frames")

            status, ctype, first = get(base + "/metrics")
            t.check(status == 200 and ctype.startswith("text/plain; version=0.0.4"), f"{status} {ctype}")
            check = subprocess.run([promtool, "check", "metrics"], input=first, capture_output=True, text=True)
            t.check(check.returncode == 0 and not check.stdout.strip() and not check.stderr.strip(),
                    f"promtool check metrics: rc {check.returncode}\n{check.stdout}{check.stderr}")

            samples, types, helps = parse(first)
            t.check(set(types) == helps, f"families without HELP or TYPE: {set(types) ^ helps}")
            for name in ("laps_engine_data_sent_total", "laps_drops_total", "laps_parse_errors_total",
                         "laps_path_data_packets_total", "laps_port_rx_packets_total", "laps_port_xstat_total",
                         "laps_worker_rx_host_total"):
                t.check(types.get(name) == "counter", f"{name}: TYPE {types.get(name)}")
            for name in ("laps_path_real_latency_seconds", "laps_path_valid", "laps_mempool_in_use",
                         "laps_engine_reorder_held_max", "laps_active_flows"):
                t.check(types.get(name) == "gauge", f"{name}: TYPE {types.get(name)}")

            sent = value(samples, "laps_engine_data_sent_total", instance="a", worker="0")
            t.check(sent > 0, "a sent no DATA")
            fast = value(samples, "laps_path_data_packets_total", instance="a", pid="0")
            slow_path = value(samples, "laps_path_data_packets_total", instance="a", pid="1")
            t.check(fast > 0 and slow_path > 0, f"DATA per path of a: pid 0 {fast}, pid 1 {slow_path}")
            t.check(value(samples, "laps_path_base_latency_seconds", instance="a", pid="1") == 260e-6,
                    "a's pid 1 baseVal is 260 us")
            t.check(value(samples, "laps_path_valid", instance="b", pid="0") == 1, "b's pid 0 is valid")
            reasons = {dict(ls).get("reason") for (n, ls) in samples if n == "laps_drops_total"}
            for r in ("host_drop_oversize", "data_drop_duplicate", "tx_drop_fabric", "dispatch_drop_full"):
                t.check(r in reasons, f"laps_drops_total has no reason {r}")
            t.check(value(samples, "laps_parse_errors_total", instance="b", reason="parse_bad_version") == 0,
                    "parse errors by reason")
            t.check(value(samples, "laps_port_rx_packets_total", instance="a", port="host") > 0, "a's host port")
            t.check(value(samples, "laps_worker_rx_fabric_total", instance="b", worker="0") > 0, "b's worker RX")
            pools = {dict(ls)["pool"] for (n, ls) in samples if n == "laps_mempool_size"}
            t.check({"a_pkt", "a_ctl", "b_pkt", "b_ctl", "link_pkt"} <= pools, f"mempools: {pools}")

            _, _, second = get(base + "/metrics")
            again, _, _ = parse(second)
            t.check(value(again, "laps_engine_data_sent_total", instance="a") >= sent, "a counter went down")

            status, ctype, om = get(base + "/metrics", {"Accept": "application/openmetrics-text; version=1.0.0"})
            t.check(status == 200 and ctype.startswith("application/openmetrics-text"), f"OpenMetrics: {ctype}")
            t.check(om.endswith("# EOF\n") and "# TYPE laps_engine_data_sent counter\n" in om,
                    "OpenMetrics: counter families without _total, # EOF at the end")

            status, _, _ = get(base + "/")
            t.check(status == 404, f"GET / answered {status}")
            req = urllib.request.Request(base + "/metrics", data=b"x", method="POST")
            try:
                urllib.request.urlopen(req, timeout=30)
                t.fail("POST /metrics was accepted")
            except urllib.error.HTTPError as e:
                t.check(e.code == 405, f"POST answered {e.code}")
            slow.close()
        finally:
            rc, text, rep = t.stop_laps(p, out)
        t.check_no_leak(rep, rc)
        print(f"OK: {len(samples)} samples in {len(types)} families pass promtool check metrics; "
              f"a's DATA: pid 0 {int(fast)}, pid 1 {int(slow_path)}")


if __name__ == "__main__":
    main()
