#!/usr/bin/env bash
#! On the GPU machine: the twophase command at the sizes the GPU is meant for (info; a 2^27 u32 .npy sorted on the GPU and on the CPU with phase timings, every output checked by NumPy; argsort, NumPy's float order, merge and search on the GPU; the full bench).
#
# Usage (scripts/device.sh copies this to <dir>/cli.sh beside main_twophase, the command's
# binary): bash <dir>/run.sh cli   (run.sh sets up NVRTC and a private kernel cache, then runs
# this). Needs python3 with NumPy. Logs, the bench's CSV and SVG go to $OUT (default
# /tmp/twophase-out); the data files to a temporary folder, removed at the end.
set -uo pipefail
OUT=${OUT:-/tmp/twophase-out}
mkdir -p "$OUT"
GPU_DIR=${TWOPHASE_GPU_DIR:-$(dirname "$0")}
BIN=$GPU_DIR/main_twophase
# The sizes of the issue: 2^27 keys to sort, two sorted runs of 2^26 to merge, 2^26 needles in
# a haystack of 2^26.
LOG2_KEYS=${TWOPHASE_CLI_LOG2:-27}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/twophase-cli.XXXXXXXX") || { echo "mktemp failed"; exit 1; }
trap 'rm -rf "$WORK"' EXIT
status=0

# Run the command in $1's log under $OUT with the rest as arguments, print its end-to-end wall
# time, and note a failure.
timed() {
  local log=$OUT/$1
  shift
  local t0 t1
  t0=$(date +%s%N)
  "$@" >"$log" 2>&1
  local rc=$?
  t1=$(date +%s%N)
  cat "$log"
  echo "-- $(basename "$log" .log): rc $rc, end to end $(((t1 - t0) / 1000000)) ms"
  [ "$rc" -eq 0 ] || status=1
}

# A NumPy check (a Python expression over the files in $WORK), printed as ok or FAILED.
check() {
  local what=$1 code=$2
  if python3 - "$WORK" "$code" <<'PY'; then echo "ok: $what"; else echo "FAILED: $what"; status=1; fi
import sys
import numpy as np
work, code = sys.argv[1], sys.argv[2]
load = lambda name: np.load(f"{work}/{name}")
sys.exit(0 if eval(code) else 1)
PY
}

echo "== twophase info"
timed cli_info.log "$BIN" info

echo "== inputs (NumPy)"
python3 - "$WORK" "$LOG2_KEYS" <<'PY' || { echo "FAILED: inputs"; exit 1; }
import sys
import numpy as np
work, log2 = sys.argv[1], int(sys.argv[2])
n = 1 << log2
rng = np.random.default_rng(0x2f6e2b1d)
np.save(f"{work}/keys.npy", rng.integers(0, 2**32, n, dtype=np.uint32))
# Floats with NaNs of both signs and zeros of both signs, for NumPy's order.
f = rng.standard_normal(n // 8).astype(np.float32)
f[::97] = np.nan
f[1::97] = -np.nan
f[2::89] = 0.0
f[3::89] = -0.0
np.save(f"{work}/floats.npy", f)
a = np.sort(rng.integers(0, 2**32, n // 2, dtype=np.uint32))
b = np.sort(rng.integers(0, 2**32, n // 2, dtype=np.uint32))
np.save(f"{work}/a.npy", a)
np.save(f"{work}/b.npy", b)
print(f"keys: {n} u32, floats: {n // 8} f32, a and b: {n // 2} u32 each")
PY

for backend in gpu cpu; do
  echo "== sort 2^$LOG2_KEYS u32 .npy on the $backend"
  timed "cli_sort_u32_$backend.log" "$BIN" sort "$WORK/keys.npy" -o "$WORK/sorted_$backend.npy" \
    "--$backend" --timings --quiet
done
check "the gpu's sort equals np.sort" \
  'np.array_equal(load("sorted_gpu.npy"), np.sort(load("keys.npy")))'
check "the cpu's sort equals the gpu's" \
  'np.array_equal(load("sorted_cpu.npy"), load("sorted_gpu.npy"))'
rm -f "$WORK/sorted_cpu.npy"

echo "== argsort on the gpu"
timed cli_argsort_gpu.log "$BIN" sort "$WORK/keys.npy" --argsort -o "$WORK/perm.npy" --gpu \
  --timings --quiet
check "argsort equals np.argsort(kind=stable)" \
  'np.array_equal(load("perm.npy"), np.argsort(load("keys.npy"), kind="stable"))'
rm -f "$WORK/perm.npy"

echo "== f32 with NaNs in NumPy's order, descending too, on the gpu"
timed cli_sort_f32_numpy_gpu.log "$BIN" sort "$WORK/floats.npy" -o "$WORK/floats_np.npy" \
  --float-order numpy --gpu --timings --quiet
check "NumPy order equals np.sort(kind=stable), bit for bit" \
  'np.array_equal(load("floats_np.npy").view(np.uint32), np.sort(load("floats.npy"), kind="stable").view(np.uint32))'
timed cli_sort_f32_total_desc_gpu.log "$BIN" sort "$WORK/floats.npy" -o "$WORK/floats_desc.npy" \
  --descending --gpu --quiet
check "descending total order is the reversed ascending one on the bit images" \
  'np.array_equal((lambda b: np.where(b >> 31 == 1, ~b, b | np.uint32(1 << 31)))(load("floats_desc.npy").view(np.uint32)), np.sort((lambda b: np.where(b >> 31 == 1, ~b, b | np.uint32(1 << 31)))(load("floats.npy").view(np.uint32)))[::-1])'

echo "== merge of two sorted 2^$((LOG2_KEYS - 1)) u32 runs on the gpu"
timed cli_merge_gpu.log "$BIN" merge "$WORK/a.npy" "$WORK/b.npy" -o "$WORK/merged.npy" --gpu \
  --timings --quiet
check "merge equals np.sort of both" \
  'np.array_equal(load("merged.npy"), np.sort(np.concatenate([load("a.npy"), load("b.npy")])))'
rm -f "$WORK/merged.npy"

echo "== search: b's keys in a, lower and upper bounds, on the gpu"
timed cli_search_gpu.log "$BIN" search "$WORK/a.npy" "$WORK/b.npy" -o "$WORK/lower.npy" --gpu \
  --timings --quiet
timed cli_search_upper_gpu.log "$BIN" search "$WORK/a.npy" "$WORK/b.npy" -o "$WORK/upper.npy" \
  --upper --gpu --quiet
check "lower bounds equal np.searchsorted(side=left)" \
  'np.array_equal(load("lower.npy"), np.searchsorted(load("a.npy"), load("b.npy"), side="left"))'
check "upper bounds equal np.searchsorted(side=right)" \
  'np.array_equal(load("upper.npy"), np.searchsorted(load("a.npy"), load("b.npy"), side="right"))'
rm -f "$WORK"/*.npy

echo "== bench (2^16 .. 2^$LOG2_KEYS)"
timed cli_bench.log "$BIN" bench --max "$LOG2_KEYS" --out "$OUT/cli_bench" --quiet
exit $status
