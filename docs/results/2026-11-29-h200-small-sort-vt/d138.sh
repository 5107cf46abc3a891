# H200: the shipped sorts at d7f2a2d at 2^20, 2^24 and 2^27 (u32, u64, u32 pairs, f32, f64, the
# top-8-bit comparator) beside CUB's merge and radix sorts built and run in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d138.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1
kinds="u32 u64 u32-pairs f32 f64 u32-top8"
for kind in $kinds; do
  for p in 20 24 27; do
    TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=$p timeout 200 .gpu/bench_gpu_mergesort --profile > $OUT/warm_${kind}_$p.log 2>&1 &
  done
  wait
done
wait
export TWOPHASE_BENCH_SIZES=20,24,27
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in $kinds; do
  TWOPHASE_BENCH_KIND=$kind timeout 90 /tmp/cub_mergesort $OUT/cub_$kind.txt > /dev/null 2>&1
done
for kind in $kinds; do cat $OUT/cub_$kind.txt; done > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E " (20|24|27) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for kind in $kinds; do
  TWOPHASE_BENCH_KIND=$kind timeout 90 .gpu/bench_gpu_mergesort > $OUT/d138_$kind.log 2>&1
  echo "$kind rc $?" >> $log
  grep -E "^\| twophase|panicked|copy rate" $OUT/d138_$kind.log >> $log
done
cd $OUT && tar czf /tmp/d138.tgz . && mv /tmp/d138.tgz $OUT/all.tgz
cat $log
