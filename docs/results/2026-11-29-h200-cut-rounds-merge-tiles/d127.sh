# H200: the tests of the cheaper four-way cut rounds and of the large merges' tiles (test binaries
# in parallel, NVRTC compiling side by side), memcheck of the pass plans at small scale, and the
# shipped merges timed beside CUB's DeviceMerge.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d127.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_merge.cu -o /tmp/cub_merge > /tmp/cub_build2.log 2>&1 || echo "nvcc merge failed" >> $log) &
run() { local name=$1; shift; timeout 330 .gpu/$name --include-ignored "$@" > $OUT/${name}.log 2>&1; echo "$name rc $?" >> $log; }
run test_gpu_mergesort --skip stable_block_sort_at_its_shipped_width --skip past_i32 &
run test_gpu_merge &
run test_gpu_segmented_sort --skip past_u32 &
run test_adversarial inconsistent_comparators tiles_block_sort checks_catch floats_partial &
run test_gpu_comparator &
wait
for f in $OUT/test_*.log; do echo "-- $(basename $f)" >> $log; grep -E "^test result|panicked|FAILED|failed" $f | head -8 >> $log; done
echo "== memcheck" >> $log
TWOPHASE_TEST_SCALE=small timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 .gpu/test_gpu_mergesort --include-ignored \
  --test-threads=1 mergesort_two_four_and_eight_way_pass_plans quad_cut_lanes > $OUT/memcheck.log 2>&1
echo "memcheck rc $?" >> $log
grep -E "ERROR SUMMARY|^test result" $OUT/memcheck.log >> $log
timeout 60 /tmp/cub_merge $OUT/cub_merge.txt | grep "u32 " >> $log 2>&1
TWOPHASE_BENCH_KIND=u32 TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt TWOPHASE_BENCH_SIZES=24,25,26,27 timeout 100 .gpu/bench_gpu_merge > $OUT/d127_merge.log 2>&1
echo "merge rc $?" >> $log
grep -E "^\| twophase|panicked|copy rate" $OUT/d127_merge.log >> $log
cat $log
