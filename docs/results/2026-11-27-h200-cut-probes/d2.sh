#!/usr/bin/env bash
# CUB merge sort peer, then the mergesort benchmark at HEAD (base) and with the narrowed cuts
# (new), kind by kind, shipped tunings.
set -u
cd "$(dirname "$0")"
source ./env.sh
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
t0=$SECONDS
nvcc -O3 -std=c++17 -arch=sm_90 cub_mergesort.cu -o /tmp/cub_mergesort > /tmp/cub_build.log 2>&1 || cat /tmp/cub_build.log
/tmp/cub_mergesort $OUT/cub_mergesort.txt > $OUT/cub_mergesort.log 2>&1; echo "cub $((SECONDS-t0))s"
for kind in ${KINDS:-u32 u64 u32-pairs u32-top8}; do
  for b in base new; do
    exe=./bench_gpu_mergesort; [ $b = base ] && exe=./bench_base_gpu_mergesort
    echo "== $b $kind $((SECONDS-t0))s"
    TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind $exe 2>&1 | grep -E "^\| twophase|copy rate|panick|rror" | tee -a $OUT/ab_$b.log
  done
done
echo "total $((SECONDS-t0))s"
