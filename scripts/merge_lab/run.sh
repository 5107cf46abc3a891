#!/usr/bin/env bash
#! On the GPU: build merge_lab and time every variant variants.sh made, interleaved, per shape and size.
# Usage (device tool, carry [".gpu"]): bash .gpu/lab/run.sh   -> $OUT/merge_lab_logs.tar.gz (or /tmp)
set -uo pipefail
cd "$(dirname "$0")"
out=${OUT:-/tmp}
logs=$(mktemp -d)
REPS=40     # timed launches per variant and round
ROUNDS=8    # rounds over all variants, interleaved against drift
nvcc -O2 -std=c++17 -o merge_lab merge_lab.cpp -lcuda || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv > "$logs/gpu.txt"
# The variants of one shape family (k: u32 keys, p: u32 pairs, l: u64 keys), the unchecked base
# first when present (every row is compared with the first), as abi:name:cubin.
set_of() {
  local list="" f
  for f in "$1"_base_*.cubin; do [ -e "$f" ] && list="b:$(echo "$f" | sed 's/_nt.*//'):$f"; done
  for f in "$1"_*.cubin; do case $f in *_base_*) ;; *) list="$list c:$(echo "$f" | sed 's/_nt.*//'):$f";; esac; done
  echo "$list"
}
for lg in 27 24 22 20; do
  ./merge_lab $lg 0 $REPS $ROUNDS $(set_of k) > "$logs/keys_2e$lg.txt" 2>&1
  ./merge_lab $lg 1 $REPS $ROUNDS $(set_of p) > "$logs/pairs_2e$lg.txt" 2>&1
  ./merge_lab $lg 2 $REPS $ROUNDS $(set_of l) > "$logs/u64_2e$lg.txt" 2>&1
done
grep -h "median\|NO\|mismatch" "$logs"/*_2e*.txt
# One archive: the device tool brings back only a few files.
tar czf "$out/merge_lab_logs.tar.gz" -C "$logs" .
