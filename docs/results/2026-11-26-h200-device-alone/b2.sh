#!/usr/bin/env bash
# The plain mergesort, base (0553ba6) against new (kernels reading a window), alternating.
set -u
cd "$(dirname "$0")"
source ./env.sh
for round in 1 2; do
  for b in base new; do
    exe=./bench_gpu_mergesort; [ $b = base ] && exe=./bench_base_gpu_mergesort
    for kind in u32 u64 u32-pairs; do
      echo "== round $round $b $kind"
      TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind $exe 2>&1 | grep -E "^\| twophase|copy|panick|rror"
    done
  done
done 2>&1 | tee $OUT/mergesort_ab.log
