#!/usr/bin/env bash
# Instructions per DATA packet of the engine, per side, from callgrind at two
# run lengths (start-up and warm-up cancel out in the difference).
#
#   bench/pipeline/instructions.sh [BUILD_DIR] [bench_engine options...]
#   bench/pipeline/instructions.sh build --no-probing
#   bench/pipeline/instructions.sh build --no-probing --flows 65536
#   bench/pipeline/instructions.sh build --no-probing --auth      # signed and verified (docs/security.md)
#   bench/pipeline/instructions.sh build --no-probing --workload elephants   # 16 flows, 32 frames of one flow per burst
#   bench/pipeline/instructions.sh build --no-probing --workload elephants --acks coalesced   # one ACK_RUN per (flow, path) run
#   bench/pipeline/instructions.sh build --no-probing --workload elephants --acks coalesced --cc credit   # a CREDIT per DATA
#   bench/pipeline/instructions.sh build --no-probing --workload elephants --acks coalesced --receiver-polls # its comparison
#
# The sender's side includes its poll() after each burst (paced sends and
# timers due), as a worker's loop runs it.
#
# Lengths: 64000 and 192000 DATA packets, or 4 and 8 packets per flow when
# --flows asks for more than 16000 flows (every flow created in both runs).
set -euo pipefail
build=${1:-build}
shift || true
bench="$build/bench/pipeline/bench_engine"
[ -x "$bench" ] || { echo "instructions.sh: $bench not built (ninja -C $build)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind not installed" >&2; exit 1; }

flows=1024
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[$i]}" = --flows ] && [ $((i + 1)) -lt ${#args[@]} ]; then flows=${args[$((i + 1))]}; fi
done
short=64000 long=192000
if [ "$flows" -gt 16000 ]; then short=$((4 * flows)) long=$((8 * flows)); fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for n in "$short" "$long"; do
  valgrind --tool=callgrind --callgrind-out-file="$work/$n.out" "$bench" --count "$n" "$@" >/dev/null 2>"$work/$n.log" ||
    { cat "$work/$n.log" >&2; exit 1; }
  callgrind_annotate --inclusive=yes "$work/$n.out" >"$work/$n.txt"
done
python3 - "$work/$short.txt" "$work/$long.txt" "$((long - short))" <<'PY'
import re, sys
sides = ("sender_sends", "sender_takes_acks", "receiver_receives")
def totals(path):
    out = {}
    for line in open(path):
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)", line)
        if not m:
            continue
        for side in sides:
            if "rig::" + side in m.group(2):
                out[side] = int(m.group(1).replace(",", ""))
    return out
a, b, packets = totals(sys.argv[1]), totals(sys.argv[2]), int(sys.argv[3])
per = {s: (b[s] - a[s]) / packets for s in sides}
for s in sides:
    print(f"{s:18} {per[s]:8.1f} instructions per DATA packet")
print(f"{'sender total':18} {per['sender_sends'] + per['sender_takes_acks']:8.1f}")
PY
