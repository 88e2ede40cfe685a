"""tools/chaos 60 --seed 1 (docs/security.md, docs/app.md "Chaos runs"): two
laps processes carry TCP both ways for 60 s while links lose, reorder and go
down, both sides restart (one with its clock an hour behind), blind forgers
inject DATA and ACKs, and the console edits tables. Every byte arrives once
and in order, every exit report balances, no flow is stuck.

Skipped (77) without root, namespaces or /dev/net/tun, and under emulation
(qemu-user: a TCP stream of a minute through two emulated laps is not the
run this checks; docs/arm.md).

usage: chaos_test.py LAPS_BINARY
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    laps = sys.argv[1]
    if t.emulated(laps):
        print("chaos: skipped under emulation")
        return t.SKIP
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "chaos"), "60", "--seed", "1", "--laps", laps],
                       timeout=600)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
