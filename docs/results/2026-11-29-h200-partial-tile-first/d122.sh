# H200: the rest of the GPU mergesort tests, memcheck on the pass plans and the segmented long
# segments, then HEAD and the partial-tile-first build alternating: the segmented sort's long rows
# (four-way levels) at 2^27 and the top-8-bit user comparator's sort.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d122.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
echo "== test_gpu_mergesort, the tests d121 did not reach" >> $log
timeout 170 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 mergesort_u32_top_bits_user_comparator mergesort_u64 \
  mergesort_user_struct_custom_comparator_is_stable mergesort_wide_records_through_four_way_passes \
  quad_cut_lanes_fill_the_partition_budget tuning_falls_back_within_static_shared_memory > $OUT/test_rest.log 2>&1
echo "rc $?" >> $log
grep -E "^test |^test result|panicked" $OUT/test_rest.log >> $log
S=/usr/local/cuda/bin/compute-sanitizer
echo "== memcheck mergesort_two_four_and_eight_way_pass_plans (small)" >> $log
TWOPHASE_TEST_SCALE=small timeout 110 $S --tool memcheck --error-exitcode 1 .gpu/test_gpu_mergesort --include-ignored \
  --test-threads=1 mergesort_two_four_and_eight_way_pass_plans > $OUT/memcheck_plans.log 2>&1
echo "rc $?" >> $log
grep -E "ERROR SUMMARY|^test result" $OUT/memcheck_plans.log >> $log
echo "== memcheck segmented long segments (small)" >> $log
TWOPHASE_TEST_SCALE=small timeout 90 $S --tool memcheck --error-exitcode 1 .gpu/test_gpu_segmented_sort --include-ignored \
  --test-threads=1 long_segments > $OUT/memcheck_seg.log 2>&1
echo "rc $?" >> $log
grep -E "ERROR SUMMARY|^test result" $OUT/memcheck_seg.log >> $log
for b in head new; do
  echo "== segmented long rows $b" >> $log
  TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_LONG=1 timeout 80 .gpu/bench_seg_$b 2>&1 | grep -E "^long" >> $log
done
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=24,27
for b in bench_gpu_mergesort bench_new; do
  for kind in u32-top8; do
    echo "== $b $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 60 .gpu/$b > $OUT/d122_b.log 2>&1
    grep -E "^\| twophase|panicked" $OUT/d122_b.log >> $log
  done
done
cat $log
