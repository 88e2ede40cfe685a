#!/usr/bin/python3
"""The paper's §IV-B claims on Figs. 8-17, computed from tools/sweep CSVs
(configs/sweeps/figs8-17.yaml, figs8-17_dm.yaml; a scenario in a later CSV
replaces the earlier one's): docs/EVALUATION.md quotes its output.
  bench/paper_claims.py results/figs8-17/results.csv results/figs8-17_dm/results.csv"""
import csv
import sys
from collections import defaultdict

SCHEMES = ["ecmp", "letflow", "plb", "conweave", "conga"]


def main():
    by_scenario = {}
    for path in sys.argv[1:]:
        new = list(csv.DictReader(open(path)))
        for scen in {r["scenario"] for r in new}:
            by_scenario[scen] = [r for r in new if r["scenario"] == scen]
    rows = [r for scen in sorted(by_scenario) for r in by_scenario[scen]]
    v = defaultdict(dict)  # (scenario, scheme) -> load -> row
    for r in rows:
        v[(r["scenario"], r["scheme"])][float(r["load"])] = r
    avg = lambda s, k, l: float(v[(s, k)][l]["fct_avg_ms"])  # noqa: E731
    p99 = lambda s, k, l: float(v[(s, k)][l]["fct_p99_ms"])  # noqa: E731

    def line(title, cells):
        print(f"| {title} | " + " | ".join(cells) + " |")

    print("| claim | " + " | ".join(SCHEMES) + " |")
    print("|---|" + "---|" * len(SCHEMES))
    s = "rail_datamining"
    line("(Rail, DM) 80%: avg FCT / LAPS's (paper 3.3, 2.8, 1.6, 4.8, 6.1)",
         [f"{avg(s, k, 0.8) / avg(s, 'laps', 0.8):.2f}" for k in SCHEMES])
    line(f"(Rail, DM) 50->100%: avg FCT rise, ms (paper LAPS +0.64; 4.6, 4.3, 1.1, 5.2, 5.6); LAPS "
         f"{avg(s, 'laps', 1.0) - avg(s, 'laps', 0.5):+.2f}",
         [f"{avg(s, k, 1.0) - avg(s, k, 0.5):+.2f}" for k in SCHEMES])
    s = "rail_storage"
    line(f"(Rail, STR) 80%: P99 FCT, ms (paper LAPS 0.12; 0.67, 0.70, 0.48, 0.80, 0.85); LAPS "
         f"{p99(s, 'laps', 0.8):.2f}", [f"{p99(s, k, 0.8):.2f}" for k in SCHEMES])
    s = "rail_websearch"
    line(f"(Rail, WS) 50->100%: P99 rise, ms (paper LAPS +14; 46, 44, 18, 62, 65); LAPS "
         f"{p99(s, 'laps', 1.0) - p99(s, 'laps', 0.5):+.2f}",
         [f"{p99(s, k, 1.0) - p99(s, k, 0.5):+.2f}" for k in SCHEMES])
    print()
    best_avg = best_p99 = points = 0
    print("| scenario | LAPS best avg (of its loads) | LAPS best P99 | avg FCT / LAPS's at 80%: " +
          ", ".join(SCHEMES) + " | P99 / LAPS's at 80% |")
    print("|---|---|---|---|---|")
    for scen in sorted({r["scenario"] for r in rows}):
        loads = sorted(v[(scen, "laps")])
        a = sum(1 for l in loads if all(avg(scen, "laps", l) <= avg(scen, k, l) for k in SCHEMES))
        p = sum(1 for l in loads if all(p99(scen, "laps", l) <= p99(scen, k, l) for k in SCHEMES))
        best_avg += a
        best_p99 += p
        points += len(loads)
        ra = " ".join(f"{avg(scen, k, 0.8) / avg(scen, 'laps', 0.8):.2f}" for k in SCHEMES)
        rp = " ".join(f"{p99(scen, k, 0.8) / p99(scen, 'laps', 0.8):.2f}" for k in SCHEMES)
        print(f"| {scen} | {a}/{len(loads)} | {p}/{len(loads)} | {ra} | {rp} |")
    print(f"\nLAPS has the best average FCT at {best_avg} of {points} points, the best P99 at {best_p99}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
