"""DPDK telemetry with two instances (configs/app-ring.yaml: a and b joined
by the emulated link), read through DPDK's own client, dpdk-telemetry.py
(package dpdk), the way an operator reads it. Every /laps/ endpoint answers
for both instances with "<instance>/<key>" keys (DPDK 22.11 rejects ':' in
dictionary keys), the instance parameter narrows a reply to one instance,
and bad parameters get an error reply (docs/telemetry.md).

usage: telemetry_ring_test.py LAPS_BINARY CONFIG(configs/app-ring.yaml)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402


def client():
    for c in ("dpdk-telemetry.py", "/usr/bin/dpdk-telemetry.py"):
        if shutil.which(c):
            return shutil.which(c)
    print("SKIP: dpdk-telemetry.py not found (Debian package dpdk; tools/setup installs it)")
    sys.exit(t.SKIP)


def ask(tool, prefix, commands):
    """Runs dpdk-telemetry.py -f PREFIX with `commands` on stdin (its
    non-interactive mode: one JSON reply per line); returns the replies."""
    p = subprocess.run([sys.executable, tool, "-f", prefix], input="\n".join(commands) + "\n",
                       capture_output=True, text=True, timeout=60)
    t.check(p.returncode == 0, f"dpdk-telemetry.py failed ({p.returncode}): {p.stderr}")
    lines = [line for line in p.stdout.splitlines() if line.strip()]
    t.check(len(lines) == len(commands), f"{len(commands)} commands, {len(lines)} replies: {p.stdout[-2000:]}")
    replies = []
    for command, line in zip(commands, lines):
        reply = json.loads(line)
        key = command.split(",")[0]
        t.check(key in reply, f"{command}: reply has no '{key}': {line}")
        replies.append(reply[key])
    return replies


def main():
    laps, template = sys.argv[1], sys.argv[2]
    tool = client()
    with tempfile.TemporaryDirectory() as tmp:
        config = t.live_ring_config(template, tmp)
        p, out = t.start_laps(laps, config, "telemetry-ring", "0@0,1@1,2@1,3@0")
        prefix = t.file_prefix(p)
        sock = os.path.join(t.runtime_dir(prefix), "dpdk_telemetry.v2")
        try:
            t.wait_for(lambda: os.path.exists(sock), 30, f"the telemetry socket {sock}")

            def delivering():
                (s,) = ask(tool, prefix, ["/laps/stats"])
                return s is not None and s.get("b/engine", {}).get("data_delivered", 0) > 500
            t.wait_for(delivering, 60, "b delivering a's frames")

            commands = ["/laps/stats", "/laps/paths", "/laps/pst", "/laps/pit", "/laps/flows", "/laps/config",
                        "/laps/paths,b", "/laps/pit,a,1", "/laps/flows,3,a",
                        "/laps/paths,abc", "/laps/stats,5", "/laps/flows,0", "/laps/pst,a,b", "/laps/pit,1,"]
            (stats, paths, pst, pit, flows, config_reply, paths_b, pit_a1, flows_a, bad_paths, bad_stats,
             bad_flows, bad_two, bad_empty) = ask(tool, prefix, commands)

            for inst in ("a", "b"):
                for part in ("engine", "host_port", "fabric_port"):
                    t.check(f"{inst}/{part}" in stats, f"/laps/stats has no {inst}/{part}: {sorted(stats)}")
            t.check(stats["a/engine"]["data_sent"] > 0 and stats["a/engine"]["ack_rx"] > 0,
                    f"a sends and gets ACKs: {stats['a/engine']}")
            t.check(stats["b/engine"]["data_rx"] > 0 and stats["b/engine"]["ack_sent"] > 0,
                    f"b receives and ACKs: {stats['b/engine']}")
            t.check(stats["a/host_port"]["rx_packets"] > 0, "a's host port received nothing")

            t.check(set(paths) == {"a/0", "a/1", "b/0", "b/1"}, f"/laps/paths keys {sorted(paths)}")
            t.check(paths["a/0"]["packets"] > 0 and paths["a/0"]["base_ns"] == 60000, f"a/0: {paths['a/0']}")
            t.check(paths["a/1"]["base_ns"] == 260000 and paths["a/1"]["valid"] == 1, f"a/1: {paths['a/1']}")
            shares = paths["a/0"]["share_ppm"] + paths["a/1"]["share_ppm"]
            t.check(abs(shares - 1000000) <= 2, f"a's shares add up to {shares} ppm")

            t.check(pst["a/count"] == 1 and pst["b/count"] == 1, f"/laps/pst counts: {pst}")
            t.check(pst["a/0"] == {"dst": "10.0.0.2", "pids": "0,1", "fabric_ip": "10.0.0.2"}, f"a/0: {pst}")
            t.check(pst["b/0"]["dst"] == "10.0.0.1", f"b/0: {pst}")

            t.check(pit["a/count"] == 2 and pit["b/count"] == 2, f"/laps/pit counts: {pit}")
            t.check(pit["a/1"]["anchors"] == "100" and pit["a/1"]["uncongested_ns"] == 250000, f"a/1: {pit['a/1']}")
            t.check(pit["b/0"]["dst"] == "10.0.0.1", f"b/0: {pit['b/0']}")

            t.check(flows["a/count"] >= 1, f"a has no active flows: {flows}")
            a_flows = [k for k in flows if k.startswith("a/0x")]
            t.check(a_flows and "-> 10.0.0.2:5000 udp" in flows[a_flows[0]]["flow"], f"a's flows: {flows}")

            t.check(config_reply["source"] == config, f"/laps/config source {config_reply['source']}")
            t.check(config_reply["a"]["workers"] == 1 and config_reply["b"]["host_port"].startswith("net_pcap1"),
                    f"/laps/config: {config_reply}")

            t.check(set(paths_b) == {"b/0", "b/1"}, f"/laps/paths,b keys {sorted(paths_b)}")
            t.check(set(pit_a1) == {"a/count", "a/1"}, f"/laps/pit,a,1 keys {sorted(pit_a1)}")
            t.check(len([k for k in flows_a if k.startswith("a/0x")]) <= 3 and "b/count" not in flows_a,
                    f"/laps/flows,3,a: {flows_a}")

            for reply, words in ((bad_paths, ["'abc'", "a number", "a, b"]), (bad_stats, ["'5'", "no number"]),
                                 (bad_flows, ["'0'", "1 to 24"]), (bad_two, ["'b'", "already"]),
                                 (bad_empty, ["empty parameter"])):
                t.check(list(reply) == ["error"] and all(w in reply["error"] for w in words),
                        f"expected an error naming {words}: {reply}")
        finally:
            rc, text, rep = t.stop_laps(p, out)
        t.check("telemetry:" not in text, "laps logged a telemetry failure")
        t.check_no_leak(rep, rc)
        print(f"OK: 6 endpoints x 2 instances through {tool}; instance selection; 5 bad parameters answered "
              f"with an error")


if __name__ == "__main__":
    main()
