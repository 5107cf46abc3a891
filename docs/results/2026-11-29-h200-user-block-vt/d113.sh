# H200: a user comparator's block sort at VT 43 (shipped) against 37 (before) in the same process: the GPU mergesort tests, then u32 under the top-8-bit and `a < b` user comparators at 2^23-2^27, two rounds, CUB's merge sort under the top-8 functor and `<` in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d113.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > /tmp/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
start=$SECONDS
timeout 280 .gpu/test_gpu_mergesort --include-ignored > $OUT/d113_tests.log 2>&1
echo "test_gpu_mergesort rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d113_tests.log)" >> $log
grep -E "FAILED|panicked|stable_block_sort" $OUT/d113_tests.log >> $log
wait
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in u32-top8 u32; do
  TWOPHASE_BENCH_KIND=$kind timeout 100 /tmp/cub_mergesort $OUT/cub_$kind.txt >> $log 2>&1
done
cat $OUT/cub_u32-top8.txt $OUT/cub_u32.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=23,24,25,26,27 TWOPHASE_BENCH_VTS=37
for round in 1 2; do
  for kind in u32-top8 u32-user; do
    echo "== round $round $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 120 .gpu/bench_gpu_mergesort > $OUT/d113_b.log 2>&1
    echo "rc $?" >> $log
    grep -E "^\| twophase|^vt |panicked|copy rate" $OUT/d113_b.log >> $log
  done
done
cat $log
