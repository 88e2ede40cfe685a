"""TCP from one unmodified Linux host to another through laps (docs/app.md
"TCP through laps").

tools/tap-pair up starts laps with configs/app-tap-pair.yaml and puts its two
TAP interfaces into namespaces laps-a (10.0.0.1) and laps-b (10.0.0.2). A
Python sender in laps-a writes 64 MiB of seeded random bytes over one TCP
connection; the receiver in laps-b hashes what arrives. Then:
  - clean fabric: the SHA-256 of what arrived equals what was sent, and the
    sender's socket counted 0 retransmissions (tcp_info.tcpi_total_retrans),
    with the TAP MTU at 1414 as laps set it (no one lowered it);
  - 1% loss on pid 1 (link.paths[].loss): the transfer completes, hashes
    equal, and laps resent DATA (data_resent > 0, link drop_loss > 0).
tools/tap-pair down must leave no namespace, no interface and no laps.
Skipped (77) without root, namespaces or /dev/net/tun.

usage: tap_pair_test.py LAPS_BINARY
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "tap-pair")
SIZE = 64 << 20
PORT = 5301

RECEIVER = f"""
import hashlib, socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.0.0.2", {PORT})); s.listen(1); print("listening", flush=True)
c, _ = s.accept(); h = hashlib.sha256(); n = 0
while True:
    b = c.recv(1 << 20)
    if not b: break
    h.update(b); n += len(b)
print(n, h.hexdigest(), flush=True)
"""

SENDER = f"""
import hashlib, random, socket, struct
data = random.Random(21).randbytes({SIZE})
c = socket.create_connection(("10.0.0.2", {PORT}), timeout=120)
c.sendall(data); c.shutdown(socket.SHUT_WR); c.recv(1)
info = c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
total_retrans = struct.unpack_from("I", info, 100)[0]  # tcpi_total_retrans
print(len(data), hashlib.sha256(data).hexdigest(), total_retrans, flush=True)
"""


def skip(why):
    print("SKIP: " + why)
    sys.exit(t.SKIP)


def run(*cmd, check=True, **kw):
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        t.fail(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def transfer():
    """Returns (sent bytes, sent hash, retransmissions, received bytes, received hash)."""
    receiver = subprocess.Popen(["ip", "netns", "exec", "laps-b", sys.executable, "-c", RECEIVER],
                                stdout=subprocess.PIPE, text=True)
    try:
        t.check(receiver.stdout.readline().strip() == "listening", "the receiver did not start")
        sent = run("ip", "netns", "exec", "laps-a", sys.executable, "-c", SENDER, timeout=300).stdout.split()
        got = receiver.communicate(timeout=60)[0].split()
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.wait()
    return int(sent[0]), sent[1], int(sent[2]), int(got[0]), got[1]


def report_of(log):
    return t.parse_report(open(log).read())


def one_run(laps, config, state, name):
    env = dict(os.environ, LAPS=laps, LAPS_TAP_PAIR_DIR=state)
    up = run(TOOL, "up", "--config", config, env=env, check=False)
    if up.returncode != 0:
        run(TOOL, "down", env=env, check=False)
        t.fail(f"tap-pair up failed:\n{up.stdout}\n{up.stderr}")
    try:
        link = run("ip", "-n", "laps-a", "-o", "link", "show", "lapsa").stdout
        t.check(" mtu 1414 " in link, f"{name}: the TAP MTU is not 1414 as laps sets it: {link}")
        result = transfer()
    finally:
        down = run(TOOL, "down", env=env, check=False)
    t.check(down.returncode == 0, f"tap-pair down failed:\n{down.stdout}\n{down.stderr}")
    namespaces = run("ip", "netns", "list").stdout
    t.check(not re.search(r"\blaps-[ab]\b", namespaces), f"namespaces left behind: {namespaces}")
    for iface in ("lapsa", "lapsb"):
        t.check(not os.path.exists(f"/sys/class/net/{iface}"), f"interface {iface} left behind")
    log = open(f"{state}/laps.log").read()
    t.check("laps: mbufs: all back in their pools" in log, f"{name}: laps did not exit cleanly")
    rep = report_of(f"{state}/laps.log")
    t.check_accounting(rep)
    return result, rep


def main():
    laps = sys.argv[1]
    if os.geteuid() != 0:
        skip("needs root (network namespaces)")
    if not os.path.exists("/dev/net/tun") or shutil.which("ip") is None:
        skip("no /dev/net/tun or no ip(8)")
    probe = f"lapsprobe{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        skip("cannot create a network namespace here")
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    if re.search(r"\blaps-[ab]\b", run("ip", "netns", "list").stdout):
        t.fail("namespaces laps-a/laps-b exist already (a tap-pair is up?): tools/tap-pair down first")

    with tempfile.TemporaryDirectory() as state:
        config = os.path.join(ROOT, "configs", "app-tap-pair.yaml")
        if os.environ.get("LAPS_TEST_ACKS") == "coalesced" or os.environ.get("LAPS_TEST_CC") == "credit":
            # Both sides' credits paced for the line rate (the link has no
            # rate of its own): TCP's bursts queue and go on credits.
            variant = os.path.join(state, "variant.yaml")
            with open(variant, "w") as f:
                f.write(t.with_test_cc(t.with_test_acks(open(config).read()),
                                       after="    retransmit: {min_timeout_us: 10000, window_packets: 1024}\n",
                                       congestion="{cc: credit}"))
            config = variant
        (n, digest, retrans, got, got_digest), rep = one_run(laps, config, state, "clean")
        t.check(n == SIZE and got == SIZE, f"clean: {got} of {n} bytes arrived")
        t.check(digest == got_digest, "clean: what arrived is not what was sent (SHA-256 differs)")
        t.check(retrans == 0, f"clean: the sender's TCP retransmitted {retrans} segments; laps: " + ", ".join(
            f"{k} {v}" for k, v in rep.items()
            if v and re.search(r"drop|timeout|late|resent|errors|missed|nombuf", k) and "drop_duplicate" not in k))
        if os.environ.get("LAPS_TEST_CC") == "credit":
            # The bulk direction's DATA went on b's credits.
            t.check(rep["b.engine.credit_sent"] > 0 and rep["a.engine.credit_taken"] > 0,
                    f"credit: b sent {rep['b.engine.credit_sent']} CREDITs, a took {rep['a.engine.credit_taken']}")
            print(f"credits: b sent {rep['b.engine.credit_sent']}, a took {rep['a.engine.credit_taken']}, "
                  f"a fell back {rep['a.engine.credit_fallback']} times")
        print(f"OK clean: 64 MiB, SHA-256 equal, 0 TCP retransmissions "
              f"(laps DATA {rep['a.engine.data_sent']}, resent {rep['a.engine.data_resent']})")

        lossy = os.path.join(state, "lossy.yaml")
        text = open(config).read().replace("- {pid: 1, delay_us: 60}", "- {pid: 1, delay_us: 60, loss: 0.01}")
        t.check("loss: 0.01" in text, "the config's link paths changed: cannot add loss")
        with open(lossy, "w") as f:
            f.write(text)
        (n, digest, retrans, got, got_digest), rep = one_run(laps, lossy, state, "lossy")
        t.check(got == SIZE and digest == got_digest, f"lossy: {got} of {n} bytes, SHA-256 equal: {digest == got_digest}")
        lost = rep["link.a_to_b.drop_loss"] + rep["link.b_to_a.drop_loss"]
        t.check(lost > 0, "lossy: the link dropped nothing")
        t.check(rep["a.engine.data_resent"] > 0, "lossy: laps resent nothing")
        print(f"OK lossy: 64 MiB, SHA-256 equal; link dropped {lost}, laps resent "
              f"{rep['a.engine.data_resent'] + rep['b.engine.data_resent']}, TCP retransmitted {retrans}")


if __name__ == "__main__":
    main()
