#!/usr/bin/env bash
# The topology benchmark matrix of docs/performance-topology.md.
#   bench/topology/run.sh [build dir]      (default: build)
# REPEAT (5) and REPEAT_BIG (2, for all 8,192 hosts of fat-tree k=32) set the
# repetitions; each line reports the best and the median time.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}/bench/topology/topology_bench
repeat=${REPEAT:-5}
for threads in 1 2; do
  "$bin" --topology dragonfly --paths paper --threads "$threads" --repeat "$repeat"
  "$bin" --topology dragonfly --paths yen:k=8,stretch=2 --threads "$threads" --repeat "$repeat"
  "$bin" --topology fat_tree:k=16 --paths yen:k=8,stretch=2 --threads "$threads" --repeat "$repeat"
  "$bin" --topology fat_tree:k=32 --paths yen:k=8,stretch=2 --threads "$threads" --hosts 1 --repeat "$repeat"
  "$bin" --topology fat_tree:k=32 --paths yen:k=8,stretch=2 --threads "$threads" --hosts 256 --repeat "$repeat"
  "$bin" --topology fat_tree:k=32 --paths yen:k=8,stretch=2 --threads "$threads" --repeat "${REPEAT_BIG:-2}"
done
