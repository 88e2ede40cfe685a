"""The PromQL queries of docs/telemetry.md ("Queries") parse: each becomes a
recording rule checked by Prometheus' own `promtool check rules`, and each
names only metric families laps exports (those of the "Families" table).

usage: promql_docs_test.py SOURCE_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    root = sys.argv[1]
    promtool = shutil.which("promtool")
    if not promtool:
        fail("promtool not found: install Debian's prometheus package (tools/setup does)")
    with open(os.path.join(root, "docs", "telemetry.md")) as f:
        doc = f.read()
    blocks = re.findall(r"```promql\n(.*?)```", doc, re.S)
    if not blocks:
        fail("docs/telemetry.md has no ```promql block")
    queries, current = [], []
    for line in blocks[0].splitlines():
        if line.startswith("#") or not line.strip():
            if current:
                queries.append(" ".join(current))
                current = []
            continue
        current.append(line.strip())
    if current:
        queries.append(" ".join(current))
    families = set(re.findall(r"`(laps_[a-z_]+)`", doc))
    # laps_engine_<counter>_total and laps_worker_<counter>_total: the counter lists.
    for header, prefix in (("pipeline/counters.hpp", "laps_engine_"), ("app/run/counters.hpp", "laps_worker_")):
        with open(os.path.join(root, header)) as f:
            for name in re.findall(r"X\((\w+), \"", f.read()):
                families.add(f"{prefix}{name}_total")
    for q in queries:
        for name in re.findall(r"\b(laps_[a-z_]+)\b", q):
            if name not in families:
                fail(f"query names {name}, which the Families table does not list: {q}")
    with tempfile.TemporaryDirectory() as tmp:
        rules = os.path.join(tmp, "rules.yml")
        with open(rules, "w") as f:
            f.write("groups:\n  - name: laps_docs\n    rules:\n")
            for i, q in enumerate(queries):
                f.write(f"      - record: laps:docs_query_{i}\n        expr: '{q}'\n")
        p = subprocess.run([promtool, "check", "rules", rules], capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"promtool check rules:\n{p.stdout}{p.stderr}")
    print(f"OK: {len(queries)} PromQL queries of docs/telemetry.md pass promtool check rules")


if __name__ == "__main__":
    main()
