# H200: a warp a search up to 512 threads an SM (quad_cut_warp_threads_per_sm, boundary_search_threads_per_sm). Per kernel (Nsight Compute, 2^24) of u32 under Less with its sweeps, and of the top-8 and `a < b` user comparators shipped and with the 384 budgets before; then three rounds timed at 2^20, 2^24, 2^27, shipped and 384 in the same process, CUB merge sort under the top-8 functor and `<` in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d110.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > /tmp/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
for kind in u32 u32-user u32-top8; do
  echo "== ncu $kind 2^24" >> $log
  if [ $kind = u32 ]; then unset TWOPHASE_BENCH_SHIPPED_ONLY; else export TWOPHASE_BENCH_SHIPPED_ONLY=1; fi
  TWOPHASE_BENCH_SEARCH_BUDGETS=384 TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=24 timeout 120 \
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
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_SEARCH_BUDGETS=384
for round in 1 2 3; do
  for kind in u32-top8 u32-user; do
    echo "== round $round $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/bench_gpu_mergesort > $OUT/d110_b.log 2>&1
    echo "rc $?" >> $log
    grep -E "^\| twophase|^search budget|panicked|copy rate" $OUT/d110_b.log >> $log
  done
done
cat $log
