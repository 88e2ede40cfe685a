"""net_null for a bounded packet count: the run ends by run.max_packets and
every mbuf is back in its pool (exit 0). Uses configs/app-null.yaml with the
stop condition replaced.

usage: null_bounded_test.py LAPS_BINARY CONFIG(configs/app-null.yaml)
"""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

PACKETS = 200000


def main():
    laps, template = sys.argv[1], sys.argv[2]
    with open(template) as f:
        text = f.read()
    text = re.sub(r"(?m)^run: .*$", f"run: {{max_packets: {PACKETS}}}", text)
    text = re.sub(r"(?m)^stats: .*$", "", text)
    with tempfile.TemporaryDirectory() as tmp:
        with open(f"{tmp}/null.yaml", "w") as f:
            f.write(text)
        rc, out, _, rep = t.run_laps(laps, f"{tmp}/null.yaml", "null")
        t.check_no_leak(rep, rc)
        t.check("stopped: run.max_packets reached" in out, "did not stop by run.max_packets")
        t.check(rep["laps.engine.host_rx"] >= PACKETS, "fewer host frames than max_packets")
        t.check(rep["laps.worker0.tx_drop_host"] + rep["laps.worker0.tx_drop_fabric"] == 0, "TX drops on net_null")
        print(f"OK: {rep['laps.engine.host_rx']} host frames, {rep['laps.run.mpps']} Mpps, no mbuf leaked")


if __name__ == "__main__":
    main()
