#!/usr/bin/env bash
#! On the GPU machine: build the CUB peers, run the GPU tests, then the peers and GPU benchmarks.
#
# Usage (from the repository root, .gpu/ filled by scripts/device.sh):
#   bash .gpu/run.sh [NAME ...]   NAME = main_<x>, example_<x>, test_<x> or bench_<x> from .gpu/; default: all.
# Logs and results go to $OUT (the device tool's output folder) or /tmp/twophase-out.
set -uo pipefail
OUT=${OUT:-/tmp/twophase-out}
mkdir -p "$OUT"
nvrtc_lib=$(python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${nvrtc_lib}:${LD_LIBRARY_PATH:-}
export TWOPHASE_CACHE_DIR=/tmp/twophase-cache
# Each benchmark finds the results of its CUB peer here.
export TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv

selected=("$@")
if [ ${#selected[@]} -eq 0 ]; then
  selected=($(cd .gpu && ls main_* example_* test_* bench_* 2>/dev/null))
fi
wants() { printf '%s\n' "${selected[@]}" | grep -qx "$1"; }

# Peers: one per benchmark, built in the background while the tests run.
peers=()
for bench in "${selected[@]}"; do
  case $bench in bench_gpu_*) peer=cub_${bench#bench_gpu_} ;; *) continue ;; esac
  [ -f ".gpu/$peer.cu" ] || continue
  peers+=("$peer")
  (nvcc -O3 -std=c++17 -arch=sm_90 ".gpu/$peer.cu" -o "/tmp/$peer" >"/tmp/$peer.build.log" 2>&1 \
    || { echo "nvcc failed for $peer"; cat "/tmp/$peer.build.log"; }) &
done

status=0
for name in "${selected[@]}"; do
  case $name in main_* | example_*) ;; *) continue ;; esac
  echo "== $name"
  ".gpu/$name" 2>&1 | tee "$OUT/$name.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
for name in "${selected[@]}"; do
  case $name in test_*) ;; *) continue ;; esac
  echo "== $name"
  ".gpu/$name" --include-ignored --test-threads=1 2>&1 \
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
  ".gpu/$name" 2>&1 | tee "$OUT/$name.log" || status=1
done
exit $status
