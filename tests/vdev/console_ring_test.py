"""The console on a live net_ring link (two instances, two paths of 50 and
250 us), through --cmdline-file:
  - `path 1 down` stops DATA on pid 1 (its count freezes) while traffic goes on;
    `path 1 up` brings it back;
  - `set beta 0` makes the shares uniform (Eq. 1 with beta = 0 is random
    spraying: within 3 points of 50% over 20000 packets);
  - a bad command in the middle is an error and the session goes on.
Counts are read from `show paths stats` in the transcript; `wait <n> packets`
paces the script by traffic, not by time.

usage: console_ring_test.py LAPS_BINARY CONFIG(configs/app-ring.yaml)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

SCRIPT = """\
wait 3000 packets
path 1 down
show paths stats
wait 3000 packets
show paths stats
set beta fast
path 1 up
wait 3000 packets
show paths stats
set beta 0
show paths stats
wait 20000 packets
show paths stats
quit
"""


def main():
    laps, template = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        # a replays its pcap forever; b writes what it delivers to /dev/null.
        config = t.live_ring_config(template, tmp)
        out, rep = t.run_script(laps, config, "console-ring", "0@0,1@1,2@1,3@0", SCRIPT, tmp, timeout=280)
        t.check("error: beta: 'fast' is not a number" in out, "the bad command gave no error")
        down1, down2, up, beta0_start, beta0_end = t.path_tables(out, instance="a")
        t.check(down1.get(1) == down2.get(1),
                f"DATA on pid 1 went on while it was down: {down1.get(1)} -> {down2.get(1)}")
        t.check(down2[0] > down1[0], "no DATA on pid 0 while pid 1 was down")
        t.check(up[1] > down2[1], f"pid 1 carried nothing after `path 1 up` ({down2[1]} -> {up[1]})")
        d0 = beta0_end[0] - beta0_start[0]
        d1 = beta0_end[1] - beta0_start[1]
        share = d0 / (d0 + d1)
        t.check(d0 + d1 >= 15000, f"only {d0 + d1} DATA packets after set beta 0")
        t.check(abs(share - 0.5) < 0.03, f"beta 0: pid 0 share {share:.3f}, expected 0.5 +- 0.03")
        print(f"OK: pid 1 frozen at {down1[1]} while down, {up[1]} after up; beta 0 shares "
              f"{100 * share:.1f}% / {100 * (1 - share):.1f}% over {d0 + d1} packets")


if __name__ == "__main__":
    main()
