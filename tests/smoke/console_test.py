"""The console on net_null, through --cmdline-file: a script of commands whose
output does not depend on traffic (tables, configuration, edits, and every
kind of bad input) must print exactly the expected transcript, each bad
command giving an error while the session carries on, and `quit` ends it.

usage: console_test.py LAPS_BINARY SOURCE_ROOT [--update]
  --update rewrites tests/smoke/console_null.expected from this run.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vdev"))
import lapstest as t  # noqa: E402


def transcript(stdout):
    """The console's part of the output: from the first prompt to 'stopped'."""
    lines = stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("laps: console: running the commands of"))
    end = next(i for i, l in enumerate(lines) if l.startswith("laps: stopped:"))
    return "\n".join(lines[start + 1:end]) + "\n", lines[end]


def main():
    laps, root = sys.argv[1], sys.argv[2]
    update = "--update" in sys.argv[3:]
    here = os.path.join(root, "tests", "smoke")
    with open(os.path.join(here, "console_null.script")) as f:
        script = f.read().replace("LAPS_SOURCE", root)
    with tempfile.TemporaryDirectory() as tmp:
        with open(f"{tmp}/script.txt", "w") as f:
            f.write(script)
        # net_null with no stop condition but the script's quit.
        with open(os.path.join(root, "configs", "app-null.yaml")) as f:
            config = f.read().replace("run: {duration_ms: 1000}", "run: {}").replace(
                "stats: {interval_ms: 1000}", "stats: {interval_ms: 0}")
        with open(f"{tmp}/null.yaml", "w") as f:
            f.write(config)
        rc, out, _, rep = t.run_laps(laps, f"{tmp}/null.yaml", "console", extra=["--cmdline-file", f"{tmp}/script.txt"])
        t.check_no_leak(rep, rc)
        got, stopped = transcript(out)
        t.check(stopped == "laps: stopped: console: quit", f"the session did not end by quit: {stopped}")
        t.check("laps> show pst\n" not in got.split("laps> quit\n", 1)[1], "commands after quit were run")
        expected_path = os.path.join(here, "console_null.expected")
        got = got.replace(root, "LAPS_SOURCE").replace(tmp, "TMP")
        if update:
            with open(expected_path, "w") as f:
                f.write(got)
            print(f"wrote {expected_path}")
            return
        with open(expected_path) as f:
            expected = f.read()
        if got != expected:
            import difflib
            sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), got.splitlines(True),
                                                       "expected", "got"))
            t.fail("the console transcript differs from tests/smoke/console_null.expected")
        errors = sum(1 for line in got.splitlines() if line.startswith("error: "))
        print(f"OK: transcript matches ({len(got.splitlines())} lines, {errors} errors reported, session ended by quit)")


if __name__ == "__main__":
    main()
