#!/usr/bin/env python3
"""tools/sweep and tools/plot-sweep end to end on a tiny grid (two schemes, a
1/500-size Rail AllReduce): one CSV row per run, every byte delivered, a
second invocation resumes (runs nothing), --task runs one grid point, and the
plots exist as PNG and SVG.
  sweep_test.py <laps-testbed> <source root>"""
import csv
import subprocess
import sys
import tempfile
from pathlib import Path


def main():
    testbed, root = sys.argv[1], Path(sys.argv[2])
    sweep = root / "tools" / "sweep"
    with tempfile.TemporaryDirectory(prefix="laps-sweep-") as tmp:
        grid = Path(tmp) / "grid.yaml"
        grid.write_text("scenarios: [rail_llm_allreduce]\n"
                        "schemes: [laps, ecmp]\n"
                        "seeds: [1, 2]\n"
                        "scale: 0.002\n"
                        "pfc: on\n")
        out = Path(tmp) / "out"
        base = [str(sweep), "--grid", str(grid), "--out", str(out), "--testbed", testbed, "--jobs", "2"]
        count = subprocess.run([str(sweep), "--grid", str(grid), "--count"], capture_output=True, text=True, check=True)
        assert count.stdout.strip() == "4", count.stdout
        first = subprocess.run(base + ["--plot"], capture_output=True, text=True)
        print(first.stdout, first.stderr)
        assert first.returncode == 0, "the sweep failed"
        assert first.stdout.count(": ran") == 4, "four runs"
        rows = list(csv.DictReader(open(out / "results.csv")))
        assert len(rows) == 4, rows
        assert {r["scheme"] for r in rows} == {"laps", "ecmp"}
        assert {r["seed"] for r in rows} == {"1", "2"}
        for r in rows:
            assert r["completed"] == r["flows"] == "63", r
            assert r["all_bytes"] == "1", r
            assert float(r["fct_p99_ms"]) > 0, r
        again = subprocess.run(base, capture_output=True, text=True, check=True)
        assert again.stdout.count(": done") == 4 and ": ran" not in again.stdout, "a finished sweep resumes to nothing"
        # One grid point alone, as a Slurm array task would run it.
        (out / "runs" / "rail_llm_allreduce" / "ecmp" / "load-default" / "seed-2" / "summary.json").unlink()
        task = subprocess.run(base + ["--task", "3"], capture_output=True, text=True, check=True)
        assert task.stdout.count(": ran") == 1, task.stdout
        for name in ("rail_llm_allreduce_fct_bars", "rail_llm_allreduce_path_classes"):
            for ext in ("png", "svg"):
                assert (out / "plots" / f"{name}.{ext}").stat().st_size > 1000, name
    print("sweep: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
