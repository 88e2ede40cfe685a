"""Start-up and shutdown of the laps binary: each case runs laps once.

  help            --help documents the options and the config, exit 0
  bad_key         an unknown config key: exit 2, "file:line:col: key: unknown key"
  missing_config  --config of a file that does not exist: exit 2
  bad_devargs     a pcap file that does not exist, a driver that does not
                  exist: exit 1, "port host: cannot create '...'"
  too_few_lcores  workers on lcores EAL does not have: exit 1, "lcores: the config needs lcore 2"
  no_memory       a mempool larger than EAL's memory: exit 1, "cannot create mempool"
  unreachable_workers  more workers than steering tags, two linked instances with different
                  tag widths: exit 1, the message names steering.tag_bits and the fix
  sigterm         net_null with no stop condition, SIGTERM: exit 0, drained, no leak
  sigterm_start   SIGTERM at EAL's first line, before the ports are up: the run
                  ends as it begins, exit 0 with its whole report
  topology        tables computed from configs/topologies/two_paths.yaml for host 0

usage: smoke_test.py LAPS_BINARY CASE [SOURCE_ROOT]
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vdev"))
import lapstest as t  # noqa: E402

NULL_PORTS = """
ports:
  host:   {devargs: "net_null0,copy=1,size=256"}
  fabric: {devargs: "net_null1"}
"""
OUTER = """
outer: {ip: 10.0.0.1, next_hop_mac: "02:00:00:00:00:fe"}
"""


def run(laps, args, timeout=60):
    print("+ " + " ".join([laps] + args), flush=True)
    p = subprocess.run([laps] + args, capture_output=True, text=True, timeout=timeout)
    print(p.stdout[-4000:])
    print(p.stderr[-4000:])
    return p.returncode, p.stdout, p.stderr


def expect_error(laps, tmp, name, text, rc_expected, message, lcores="0,1"):
    path = f"{tmp}/{name}.yaml"
    with open(path, "w") as f:
        f.write(text)
    rc, out, err = run(laps, t.eal_args(name, lcores) + ["--", "--config", path, "--no-interactive"])
    t.check(rc == rc_expected, f"exit status {rc}, expected {rc_expected}")
    t.check(message.format(path=path) in err, f"stderr lacks: {message.format(path=path)}")
    # One clear message: a single "laps:" line on stderr.
    t.check(len([l for l in err.splitlines() if l.startswith("laps: ")]) == 1, "more than one laps: error line")


def main():
    laps, case = sys.argv[1], sys.argv[2]
    root = sys.argv[3] if len(sys.argv) > 3 else "."
    with tempfile.TemporaryDirectory() as tmp:
        if case == "help":
            rc, out, _ = run(laps, ["--help"])
            t.check(rc == 0, "--help exit status")
            for word in ["--config", "--cmdline-file", "--no-interactive", "ports:", "lcores:", "mempool:", "outer:",
                         "engine:", "steering:", "run:", "topology:", "instances:", "link:"]:
                t.check(word in out, f"--help does not mention {word}")
            rc, out, _ = run(laps, ["-l", "0", "--", "--help"])
            t.check(rc == 0 and "usage: laps" in out, "-- --help")
        elif case == "bad_key":
            expect_error(laps, tmp, "bad-key", "version: 1\nports:\n  host: {devarg: net_null0}\n", 2,
                         "{path}:3:10: ports.host.devarg: unknown key")
        elif case == "missing_config":
            rc, _, err = run(laps, ["-l", "0,1", "--", "--config", f"{tmp}/nope.yaml"])
            t.check(rc == 2, f"exit status {rc}")
            t.check(f"laps: config: {tmp}/nope.yaml: cannot open file" in err, "missing file message")
        elif case == "bad_devargs":
            expect_error(laps, tmp, "bad-pcap", f'ports:\n  host: {{devargs: "net_pcap0,rx_pcap={tmp}/none.pcap"}}\n'
                         '  fabric: {devargs: net_null1}\n' + OUTER, 1,
                         f"laps: port host: cannot create 'net_pcap0,rx_pcap={tmp}/none.pcap'")
            expect_error(laps, tmp, "bad-driver", 'ports:\n  host: {devargs: "net_bogus0"}\n'
                         '  fabric: {devargs: net_null1}\n' + OUTER, 1, "laps: port host: cannot create 'net_bogus0'")
            expect_error(laps, tmp, "bad-pci", 'ports:\n  host: {devargs: "0000:42:00.0"}\n'
                         '  fabric: {devargs: net_null1}\n' + OUTER, 1, "laps: port host: no ethdev named '0000:42:00.0'")
        elif case == "too_few_lcores":
            expect_error(laps, tmp, "lcores", NULL_PORTS + OUTER + "lcores: {workers: [1, 2]}\n", 1,
                         "laps: lcores: the config needs lcore 2 (worker of instance laps) but EAL has only lcores 0,1")
            expect_error(laps, tmp, "lcores-none", NULL_PORTS + OUTER, 1, "laps: lcores: no lcore left for workers",
                         lcores="0")
        elif case == "no_memory":
            expect_error(laps, tmp, "memory", NULL_PORTS + OUTER + "mempool: {mbufs: 4000000}\n", 1,
                         "laps: cannot create mempool 'laps_pkt' (packet pool, mempool.mbufs: 4000000 mbufs")
        elif case == "unreachable_workers":
            expect_error(laps, tmp, "tags", NULL_PORTS + OUTER + "lcores: {workers: [1, 2, 3]}\n"
                         "steering: {tag_bits: 1}\n", 1,
                         "laps: steering.tag_bits: 1 bits give 2 steering tags, too few for 3 workers: set "
                         "steering.tag_bits: 2 (or more, at most 8) on every host of the fabric",
                         lcores="0@0,1@1,2@0,3@1")
            link = ("version: 1\nlink: {lcore: 3}\ninstances:\n"
                    "  a: {ports: {host: {devargs: net_null0}, fabric: {link: true}}, lcores: {workers: [1]},\n"
                    "      outer: {ip: 10.0.0.1, next_hop_mac: '02:00:00:00:00:0b'}, steering: {tag_bits: 3}}\n"
                    "  b: {ports: {host: {devargs: net_null1}, fabric: {link: true}}, lcores: {workers: [2]},\n"
                    "      outer: {ip: 10.0.0.2, next_hop_mac: '02:00:00:00:00:0a'}}\n")
            expect_error(laps, tmp, "tag-widths", link, 1,
                         "laps: steering.tag_bits: instance a uses 3 bits and b 4: the steering tag width is "
                         "fabric-wide, set the same steering.tag_bits on all linked instances",
                         lcores="0@0,1@1,2@0,3@1")
        elif case == "sigterm":
            path = f"{tmp}/sigterm.yaml"
            with open(path, "w") as f:
                f.write(NULL_PORTS + OUTER + "stats: {interval_ms: 50}\n")
            p, out = t.start_laps(laps, path, "sigterm")
            # The signal goes once a stats line shows host traffic: "running"
            # alone can precede the worker's first burst on a loaded machine.
            moving = re.compile(r"laps: stats laps: host rx (?!0\.000 )")
            t.wait_for(lambda: moving.search(open(out).read()) or p.poll() is not None, 30, "host traffic")
            t.check(p.poll() is None, "laps exited early")
            rc, text, rep = t.stop_laps(p, out)
            t.check_no_leak(rep, rc)
            t.check("laps: stopped: signal SIGTERM" in text, "stop reason")
            t.check(rep["laps.engine.host_rx"] > 0, "no traffic before the signal")
        elif case == "sigterm_start":
            path = f"{tmp}/sigterm_start.yaml"
            with open(path, "w") as f:
                f.write(NULL_PORTS + OUTER)
            p, out = t.start_laps(laps, path, "sigterm_start")
            # EAL's telemetry line comes from rte_eal_init, after laps took
            # the signals and tens of ms before the engines are built: a
            # signal sent as soon as it shows lands during start-up.
            deadline = time.monotonic() + 30
            while "TELEMETRY" not in open(out).read() and p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.001)
            rc, text, rep = t.stop_laps(p, out)
            t.check_no_leak(rep, rc)
            t.check("laps: stopped: signal SIGTERM" in text, "stop reason")
            if "laps: signal SIGTERM came during start-up" not in text:
                print("note: the signal came after start-up this time")
        elif case == "topology":
            path = f"{tmp}/topo.yaml"
            with open(path, "w") as f:
                f.write(NULL_PORTS + 'outer: {next_hop_mac: "02:00:00:00:00:fe"}\n'
                        f"topology: {{file: {root}/configs/topologies/two_paths.yaml, host: 0}}\n"
                        "run: {max_packets: 1000}\n")
            rc, out, err = run(laps, t.eal_args("topology") + ["--", "--config", path, "--no-interactive"])
            rep = t.parse_report(out)
            t.check_no_leak(rep, rc)
            t.check("fabric 10.0.0.1 " in out, "outer.ip not taken from the topology's host 0")
            t.check("1 destinations, 2 paths" in out, "tables not computed from the topology")
        else:
            t.fail("unknown case " + case)
        print("OK: " + case)


if __name__ == "__main__":
    main()
