#!/usr/bin/env bash
# Per-kernel times (ncu, clocks unlocked) at 2^24 of base and new, new with cut lanes 8/16/32;
# then timed rows of new with those cut lanes.
set -u
cd "$(dirname "$0")"
source ./env.sh
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
t0=$SECONDS
for kind in u32 u64; do
  for b in base new; do
    exe=./bench_gpu_mergesort; lanes=8,16,32; [ $b = base ] && { exe=./bench_base_gpu_mergesort; lanes=; }
    echo "== ncu $b $kind $((SECONDS-t0))s"
    TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=24 TWOPHASE_BENCH_CUT_LANES=$lanes \
      ncu --clock-control none --metrics gpu__time_duration.sum --csv $exe --profile > $OUT/ncu_${b}_$kind.csv 2> $OUT/ncu_${b}_$kind.err
    grep -E "^profiled" $OUT/ncu_${b}_$kind.csv | head -12
    python3 ncu_mergesort.py $OUT/ncu_${b}_$kind.csv 2>&1 | tee $OUT/ncu_${b}_$kind.txt | head -30
  done
done
echo "== timed lanes $((SECONDS-t0))s"
for kind in u32 u64; do
  TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind TWOPHASE_BENCH_CUT_LANES=8,16,32 ./bench_gpu_mergesort 2>&1 | grep -E "^\| twophase|^variant|copy rate|panick|rror" | tee -a $OUT/lanes.log
done
echo "total $((SECONDS-t0))s"
