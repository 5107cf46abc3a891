# H200: the shipped sorts at 59ac62c (cheaper cut rounds, a warp a search up to 1024 threads an
# SM) beside CUB's merge and radix sorts in one command, after the mergesort and adversarial tests.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d131.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > /tmp/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
timeout 250 .gpu/test_gpu_mergesort --include-ignored --skip stable_block_sort_at_its_shipped_width --skip past_i32 > $OUT/d131_test_gpu_mergesort.log 2>&1 &
timeout 250 .gpu/test_adversarial --include-ignored inconsistent_comparators checks_catch > $OUT/d131_test_adversarial.log 2>&1 &
wait
for f in $OUT/d131_test_*.log; do echo "-- $(basename $f)" >> $log; grep -E "^test result|panicked" $f | head -5 >> $log; done
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in u32 u64 u32-pairs u32-top8; do
  TWOPHASE_BENCH_KIND=$kind timeout 60 /tmp/cub_mergesort $OUT/cub_$kind.txt > /dev/null 2>&1
done
cat $OUT/cub_u32.txt $OUT/cub_u64.txt $OUT/cub_u32-pairs.txt $OUT/cub_u32-top8.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E "2[0-9]" $TWOPHASE_CUB_SORT_RESULTS >> $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=20,23,24,27
for kind in u32 u64 u32-pairs u32-top8; do
  TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/bench_gpu_mergesort > $OUT/d131_$kind.log 2>&1
  echo "$kind rc $?" >> $log
  grep -E "^\| twophase|panicked|copy rate" $OUT/d131_$kind.log >> $log
done
cat $log
