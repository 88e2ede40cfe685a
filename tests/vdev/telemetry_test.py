"""DPDK telemetry endpoints of laps (docs/telemetry.md), read the way
dpdk-telemetry.py reads them: a SOCK_SEQPACKET connection to
/var/run/dpdk/<file-prefix>/dpdk_telemetry.v2, one JSON reply per command.
The test waits for the socket and for traffic (polling, no fixed sleeps),
checks each endpoint's documented fields and values, and stops laps by
SIGTERM (only the process it started).

usage: telemetry_test.py LAPS_BINARY CONFIG(configs/app-null.yaml)
"""
import json
import os
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402


class client:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(path)
        hello = json.loads(self.s.recv(16384))
        self.max_len = hello["max_output_len"]

    def get(self, command):
        self.s.send(command.encode())
        reply = json.loads(self.s.recv(self.max_len))
        key = command.split(",")[0]
        t.check(key in reply, f"{command}: reply has no '{key}': {reply}")
        return reply[key]


def main():
    laps, template = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        with open(template) as f:
            text = f.read().replace("run: {duration_ms: 1000}", "run: {duration_ms: 120000}")
        # A third path and a second destination, so that paging shows.
        text = text.replace("    - {pid: 1, base_ns: 15000, uncongested_ns: 9000, anchors: [70, 71]}",
                            "    - {pid: 1, base_ns: 15000, uncongested_ns: 9000, anchors: [70, 71]}\n"
                            "    - {pid: 5, base_ns: 7000, hops: 2}")
        text = text.replace("    - {dst: 10.0.0.2, pids: [0, 1]}",
                            "    - {dst: 10.0.0.2, pids: [0, 1]}\n    - {dst: 10.0.0.3, pids: [5]}")
        with open(f"{tmp}/null.yaml", "w") as f:
            f.write(text)
        p, out = t.start_laps(laps, f"{tmp}/null.yaml", "telemetry")
        sock = os.path.join(t.runtime_dir(t.file_prefix(p)), "dpdk_telemetry.v2")
        try:
            t.wait_for(lambda: os.path.exists(sock), 30, f"the telemetry socket {sock}")
            c = client(sock)
            # The socket opens with EAL, before laps registers its endpoints
            # (until then they answer null); then traffic flows.
            def running():
                s = c.get("/laps/stats")
                return s is not None and s["engine"]["host_rx"] > 1000
            t.wait_for(running, 30, "laps endpoints and host frames")

            stats = c.get("/laps/stats")
            engine = stats["engine"]
            for name in ("host_rx", "host_passthrough_non_ip", "data_sent", "ack_rx", "fabric_rx",
                         "to_fabric_drop_full", "active_flows"):
                t.check(name in engine, f"/laps/stats engine.{name} missing")
            t.check(engine["host_passthrough_non_ip"] == engine["host_rx"],
                    "null frames are not IP: every one is passed through")
            for port in ("host_port", "fabric_port"):
                for k in ("port_id", "rx_packets", "tx_packets", "rx_missed", "rx_errors", "tx_errors"):
                    t.check(k in stats[port], f"/laps/stats {port}.{k} missing")
            t.check(stats["host_port"]["rx_packets"] >= engine["host_rx"], "host port rx below engine host_rx")

            paths = c.get("/laps/paths")
            t.check(set(paths) == {"0", "1", "5"}, f"/laps/paths rows: {sorted(paths)}")
            t.check(paths["1"]["base_ns"] == 15000 and paths["1"]["valid"] == 1, f"/laps/paths 1: {paths['1']}")
            for k in ("packets", "bytes", "share_ppm", "real_ns", "base_ns", "probes", "losses", "valid"):
                t.check(k in paths["5"], f"/laps/paths 5.{k} missing")

            pst = c.get("/laps/pst")
            t.check(pst["count"] == 2, f"/laps/pst count {pst['count']}")
            rows = {pst[k]["dst"]: pst[k] for k in pst if k != "count"}
            t.check(rows["10.0.0.2"]["pids"] == "0,1" and rows["10.0.0.3"]["pids"] == "5", f"/laps/pst rows {rows}")
            t.check(rows["10.0.0.2"]["fabric_ip"] == "10.0.0.2", "/laps/pst fabric_ip")
            page = c.get("/laps/pst,1")
            t.check([k for k in page if k != "count"] == ["1"], f"/laps/pst,1 starts at row 1: {page}")

            pit = c.get("/laps/pit")
            t.check(pit["count"] == 3, f"/laps/pit count {pit['count']}")
            t.check(pit["1"] == {"dst": "10.0.0.2", "valid": 1, "base_ns": 15000, "uncongested_ns": 9000,
                                 "real_ns": 15000, "hops": 0, "anchors": "70,71"}, f"/laps/pit 1: {pit['1']}")
            t.check(pit["5"]["dst"] == "10.0.0.3" and pit["5"]["hops"] == 2, f"/laps/pit 5: {pit['5']}")
            page = c.get("/laps/pit,2")
            t.check(sorted(k for k in page if k != "count") == ["5"], f"/laps/pit,2 starts at pid 2: {page}")

            flows = c.get("/laps/flows")
            t.check(flows == {"count": 0}, f"/laps/flows on null traffic (not IP, no flows): {flows}")

            config = c.get("/laps/config")
            t.check(config["source"] == f"{tmp}/null.yaml", f"/laps/config source {config['source']}")
            laps_cfg = config["laps"]
            t.check(laps_cfg["policy"] == "laps" and laps_cfg["beta_mode"] == "normalized" and
                    laps_cfg["beta_alpha_milli"] == 1000 and laps_cfg["increase_stages"] == 5 and
                    laps_cfg["destinations"] == 2 and laps_cfg["paths"] == 3 and laps_cfg["workers"] == 1,
                    f"/laps/config: {laps_cfg}")
            bad = c.get("/laps/paths,abc")
            t.check(list(bad) == ["error"] and "'abc'" in bad["error"] and "first pid" in bad["error"],
                    f"/laps/paths,abc: {bad}")
            helps = c.get("/help,/laps/stats")
            t.check("/laps/stats" in helps, "/help,/laps/stats")
        finally:
            rc, text_out, rep = t.stop_laps(p, out)
        t.check_no_leak(rep, rc)
        print("OK: /laps/stats, /laps/paths, /laps/pst, /laps/pit (and pages), /laps/flows, /laps/config")


if __name__ == "__main__":
    main()
