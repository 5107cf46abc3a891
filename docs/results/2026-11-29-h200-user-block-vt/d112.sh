# H200: a user comparator's block-sort width. Per kernel (Nsight Compute, 2^24) of u32 under the top-8-bit and `a < b` user comparators, shipped (VT 37) and the sweep's VT 45, 37, 41 and 43 (256-thread four-way tiles); then timed with the sweep at 2^20, 2^24 and 2^27, two rounds, CUB's merge sort under the top-8 functor and `<` in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d112.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > /tmp/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
for kind in u32-top8 u32-user; do
  echo "== ncu $kind 2^24" >> $log
  TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=24 timeout 150 \
    ncu --clock-control none --metrics gpu__time_duration.sum --csv .gpu/bench_gpu_mergesort --profile > $OUT/ncu_$kind.csv 2> $OUT/ncu_$kind.err
  echo "ncu rc $?" >> $log
  grep profiled $OUT/ncu_$kind.csv >> $log
  python3 .gpu/ncu_mergesort.py $OUT/ncu_$kind.csv >> $log 2>&1
done
wait
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in u32-top8 u32; do
  TWOPHASE_BENCH_KIND=$kind timeout 100 /tmp/cub_mergesort $OUT/cub_$kind.txt >> $log 2>&1
done
cat $OUT/cub_u32-top8.txt $OUT/cub_u32.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
export TWOPHASE_BENCH_SIZES=20,24,27
for round in 1 2; do
  for kind in u32-top8 u32-user; do
    echo "== round $round $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 150 .gpu/bench_gpu_mergesort > $OUT/d112_b.log 2>&1
    echo "rc $?" >> $log
    grep -E "^\| twophase|^sweep|^programmatic|panicked|copy rate" $OUT/d112_b.log >> $log
  done
done
cat $log
