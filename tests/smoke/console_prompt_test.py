"""The console at an interactive prompt (a pseudo-terminal, as a person
types), as helpful as in scripts (docs/console.md "Errors"):
  - a syntax error prints the usage line, a typo the nearest command;
  - `help foo`, `help pit`, `quit now` are answered, not "Bad arguments";
  - Ctrl-C at the prompt clears the line, as in testpmd, and laps goes on
    (docs/console.md); `quit` stops it with the final report;
  - `load` takes a laps app config (with ports:), as console.md says.

usage: console_prompt_test.py LAPS_BINARY SOURCE_ROOT
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vdev"))
import lapstest as t  # noqa: E402

PROMPT = "laps> "


def main():
    laps, root = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(root, "configs", "app-null.yaml")) as f:
            text = f.read()
        running = text.replace("run: {duration_ms: 1000}", "run: {duration_ms: 300000}").replace(
            "stats: {interval_ms: 1000}", "stats: {interval_ms: 0}")
        t.check(running != text, "configs/app-null.yaml changed: update this test")
        with open(f"{tmp}/null.yaml", "w") as f:
            f.write(running)
        # An app config (ports:, outer:, ...) whose tables are new to the running laps.
        extra = running.replace("{dst: 10.0.0.2, pids: [0, 1]}", "{dst: 10.0.0.9, pids: [7, 8]}").replace(
            "{pid: 0, base_ns: 10000, uncongested_ns: 6000}", "{pid: 7, base_ns: 20000}").replace(
            "{pid: 1, base_ns: 15000, uncongested_ns: 9000, anchors: [70, 71]}", "{pid: 8, base_ns: 30000}")
        with open(f"{tmp}/more.yaml", "w") as f:
            f.write(extra)

        s = t.Prompt(laps, f"{tmp}/null.yaml", "prompt")
        try:
            s.expect("console: type help")
            s.expect(PROMPT)

            def answer(command):
                s.send(command)
                return s.expect(PROMPT).strip()

            out = answer("show pist")
            t.check("error: bad arguments; usage: show port stats all | " in out and
                    "did you mean 'show pst'?" in out, f"show pist: {out!r}")
            out = answer("set policy conga")
            t.check("error: bad arguments; usage: set policy laps|spray|ecmp|fastest" in out, f"set policy: {out!r}")
            out = answer("foo")
            t.check("error: unknown command 'foo' (help lists the commands)" in out, f"foo: {out!r}")
            out = answer("shwo pst")
            t.check("error: unknown command 'shwo pst'; did you mean 'show'?" in out, f"shwo: {out!r}")
            out = answer("help foo")
            t.check("error: help: no section or command 'foo'; sections: show, set, path, tables, control" in out,
                    f"help foo: {out!r}")
            out = answer("help pit")
            t.check("pit add <pid> base_ns=<ns>" in out and "pit del <pid>" in out and "show" not in out,
                    f"help pit: {out!r}")
            out = answer("quit now")
            t.check("error: bad arguments; usage: quit" in out, f"quit now: {out!r}")
            t.check("Bad arguments" not in s.text() and "Command not found" not in s.text(),
                    "rte_cmdline's bare messages reached the prompt")

            # Ctrl-C on a half-typed line: the line is dropped, laps goes on.
            s.type("show ps")
            s.type("\x03")
            s.expect(PROMPT)
            t.check(s.p.poll() is None, "Ctrl-C at the prompt stopped laps")
            out = answer("show pst")
            t.check("dst 10.0.0.2 pids 0,1" in out and "error" not in out, f"show pst after Ctrl-C: {out!r}")

            out = answer(f"load {tmp}/more.yaml")
            t.check(f"load: {tmp}/more.yaml: paths 2, destinations 1" in out, f"load app config: {out!r}")
            out = answer("show pst 10.0.0.9")
            t.check("dst 10.0.0.9 pids 7,8" in out, f"after load: {out!r}")
            out = answer("show capture")
            t.check("capture: none" in out, f"show capture: {out!r}")
            s.send("quit")
            rc, text_out, rep = s.finish()
        finally:
            if s.p.poll() is None:
                s.p.kill()
        t.check("laps: stopped: console: quit" in text_out, "the session did not end by quit")
        t.check_no_leak(rep, rc)
        print("OK: usage lines, nearest commands, help topics, Ctrl-C clears the line, load of an app config")


if __name__ == "__main__":
    main()
