"""net_tap: the host side as a Linux interface, in a network namespace.

laps creates the tap interface; the test moves it into a namespace of its
own, gives it 10.0.0.1/24 and a neighbour entry for 10.0.0.2, and sends UDP
datagrams from a socket there. They must leave laps' fabric pcap as LAPS
DATA whose inner frames are those datagrams. SIGTERM then stops laps, which
must exit 0 with every mbuf back. Skipped (77) where namespaces or
/dev/net/tun are not available.

usage: tap_test.py LAPS_BINARY
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lapstest as t  # noqa: E402

COUNT = 20


def sh(*cmd, check=True):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, check=check)


def skip(why):
    print("SKIP: " + why)
    sys.exit(t.SKIP)


def main():
    laps = sys.argv[1]
    if not os.path.exists("/dev/net/tun") or shutil.which("ip") is None:
        skip("no /dev/net/tun or no ip(8)")
    ns = f"lapstap{os.getpid()}"
    iface = f"lapst{os.getpid() % 100000}"
    if sh("ip", "netns", "add", ns, check=False).returncode != 0:
        skip("cannot create a network namespace here (not root, or no CAP_SYS_ADMIN)")
    p = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            with open(f"{tmp}/tap.yaml", "w") as f:
                f.write(f"""
version: 1
ports:
  host:   {{devargs: "net_tap0,iface={iface}"}}
  fabric: {{devargs: "net_pcap1,tx_pcap={tmp}/fabric.pcap"}}
lcores: {{control: 0, workers: [1]}}
outer: {{ip: 10.0.0.1, next_hop_mac: "02:00:00:00:00:fe"}}
selection: {{probing: false}}
retransmit: {{min_timeout_us: 10000000}}
paths:
  pst:
    - {{dst: 10.0.0.2, pids: [0, 1]}}
  pit:
    - {{pid: 0, base_ns: 10000}}
    - {{pid: 1, base_ns: 15000, anchors: [70]}}
""")
            p, out = t.start_laps(laps, f"{tmp}/tap.yaml", "tap")
            t.wait_for(lambda: "laps: running" in open(out).read() or p.poll() is not None, 30, "laps to start")
            t.check(p.poll() is None, "laps exited at start:\n" + open(out).read())
            sh("ip", "link", "set", iface, "netns", ns)
            # docs/app.md "Host frames": full-size host frames fit by default: laps set the
            # interface's MTU to the fabric MTU (1500) minus 86.
            link = sh("ip", "-n", ns, "-o", "link", "show", iface).stdout
            t.check(" mtu 1414 " in link, "laps did not set the TAP MTU to 1414: " + link)
            t.check("mtu: host port set from 1500 to 1414" in open(out).read(), "the MTU change is not logged")
            sh("ip", "-n", ns, "addr", "add", "10.0.0.1/24", "dev", iface)
            sh("ip", "-n", ns, "link", "set", iface, "up")
            sh("ip", "-n", ns, "neigh", "add", "10.0.0.2", "lladdr", "02:00:00:00:00:02", "dev", iface,
               "nud", "permanent")
            sender = ("import socket\n"
                      "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                      f"for i in range({COUNT}):\n"
                      "    s.sendto(b'laps-tap-%03d' % i, ('10.0.0.2', 5000))\n")
            sh("ip", "netns", "exec", ns, sys.executable, "-c", sender)

            def datagrams():
                found = []
                try:
                    frames = t.read_pcap(f"{tmp}/fabric.pcap")
                except (OSError, ValueError):
                    return found
                for fr in frames:
                    if t.is_laps(fr):
                        inner = t.Laps(fr).inner
                        if len(inner) >= 42 and inner[12:14] == b"\x08\x00" and inner[23] == 17 and \
                                struct.unpack("!H", inner[36:38])[0] == 5000:
                            found.append(inner[42:])
                return found

            t.wait_for(lambda: len(datagrams()) >= COUNT, 30, f"{COUNT} LAPS DATA on the fabric pcap")
            rc, text, rep = t.stop_laps(p, out)
            p = None
            t.check_no_leak(rep, rc)
            t.check("stopped: signal SIGTERM" in text, "no stop message")
            got = sorted(datagrams())
            t.check(got == sorted(b"laps-tap-%03d" % i for i in range(COUNT)), f"payloads: {got}")
            print(f"OK: {COUNT} datagrams from a namespace through net_tap into LAPS DATA")
    finally:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        sh("ip", "netns", "del", ns, check=False)


if __name__ == "__main__":
    main()
