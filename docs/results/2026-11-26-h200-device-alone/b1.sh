#!/usr/bin/env bash
# base (0553ba6) against new (the device call's longest segment sorted alone), one cache.
set -u
cd "$(dirname "$0")"
source ./env.sh
for round in 1 2; do
  for b in base new; do
    exe=./bench_gpu_segmented_sort; [ $b = base ] && exe=./bench_base_gpu_segmented_sort
    for l in 24 27; do
      echo "== round $round $b 2^$l"
      TWOPHASE_BENCH_LOG2N=$l $exe 2>&1 | grep -E "^\| seg|copy rate|panick|rror"
    done
  done
done 2>&1 | tee $OUT/table_ab.log
for b in base new; do
  exe=./bench_gpu_segmented_sort; [ $b = base ] && exe=./bench_base_gpu_segmented_sort
  echo "== long $b"
  TWOPHASE_BENCH_LONG=1 $exe 2>&1 | grep -E "^long|copy rate|panick|rror"
done 2>&1 | tee $OUT/long_ab.log
