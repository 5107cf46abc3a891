#!/usr/bin/env bash
#! On the GPU machine: build the CUB peers, run the GPU tests, then the peers and GPU benchmarks.
#
# Usage (from the repository root, the folder filled by scripts/device.sh, default .gpu/):
#   bash .gpu/run.sh [NAME ...]   NAME = main_<x>, example_<x>, test_<x> or bench_<x> from the folder; default: all.
# The folder is the one this script lies in (TWOPHASE_GPU_DIR overrides it).
# Logs and results go to $OUT (the device tool's output folder) or /tmp/twophase-out.
set -uo pipefail
OUT=${OUT:-/tmp/twophase-out}
mkdir -p "$OUT"
GPU_DIR=${TWOPHASE_GPU_DIR:-$(dirname "$0")}
nvrtc_lib=$(python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${nvrtc_lib}:${LD_LIBRARY_PATH:-}
export TWOPHASE_CACHE_DIR=/tmp/twophase-cache
# Each benchmark finds the results of its CUB peer here.
export TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
# The variant benchmark's CSV (scripts/plots.sh draws it).
export TWOPHASE_VARIANTS_CSV=$OUT/variants.csv
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv

selected=("$@")
if [ ${#selected[@]} -eq 0 ]; then
  selected=($(cd "$GPU_DIR" && ls main_* example_* test_* bench_* 2>/dev/null))
fi
wants() { printf '%s\n' "${selected[@]}" | grep -qx "$1"; }

# Peers: cub_<x> for each bench_gpu_<x>; the variant benchmark reads the merge and mergesort
# peers' results. Each is built once, in the background while the tests run.
peers=()
for bench in "${selected[@]}"; do
  case $bench in
    bench_gpu_variants) wanted="cub_merge cub_mergesort" ;;
    bench_gpu_*) wanted=cub_${bench#bench_gpu_} ;;
    *) continue ;;
  esac
  for peer in $wanted; do
    [ -f "$GPU_DIR/$peer.cu" ] || continue
    printf '%s\n' "${peers[@]}" | grep -qx "$peer" && continue
    peers+=("$peer")
    (nvcc -O3 -std=c++17 -arch=sm_90 "$GPU_DIR/$peer.cu" -o "/tmp/$peer" >"/tmp/$peer.build.log" 2>&1 \
      || { echo "nvcc failed for $peer"; cat "/tmp/$peer.build.log"; }) &
  done
done

status=0
for name in "${selected[@]}"; do
  case $name in main_* | example_*) ;; *) continue ;; esac
  echo "== $name"
  "$GPU_DIR/$name" 2>&1 | tee "$OUT/$name.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
for name in "${selected[@]}"; do
  case $name in test_*) ;; *) continue ;; esac
  echo "== $name"
  "$GPU_DIR/$name" --include-ignored --test-threads=1 2>&1 \
    | tee "$OUT/$name.log" | grep -E "^test |test result|panicked|differs|seed|SKIPPED"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
wait
for peer in "${peers[@]}"; do
  echo "== $peer"
  "/tmp/$peer" "$OUT/$peer.txt" 2>&1 | tee "$OUT/$peer.log" || status=1
done
for name in "${selected[@]}"; do
  case $name in bench_*) ;; *) continue ;; esac
  echo "== $name"
  "$GPU_DIR/$name" 2>&1 | tee "$OUT/$name.log" || status=1
done
exit $status
