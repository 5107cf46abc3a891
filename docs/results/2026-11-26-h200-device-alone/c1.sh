#!/usr/bin/env bash
# Strided-tile window sort: tests, then base (0553ba6) against new, one command.
set -u
cd "$(dirname "$0")"
source ./env.sh
t0=$SECONDS
./test_gpu_segmented_sort --include-ignored --test-threads=1 device long_segment rejects_invalid every_key_type > $OUT/test_gpu_segmented_sort.log 2>&1; echo "segmented rc=$? $((SECONDS-t0))s"; grep -E "test result|FAILED|panicked" $OUT/test_gpu_segmented_sort.log | head
t0=$SECONDS
./test_gpu_mergesort --include-ignored > $OUT/test_gpu_mergesort.log 2>&1; echo "mergesort rc=$? $((SECONDS-t0))s"; grep -E "test result|FAILED|panicked" $OUT/test_gpu_mergesort.log | head
t0=$SECONDS
TWOPHASE_TEST_SCALE=small timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 ./test_gpu_segmented_sort --include-ignored --test-threads=1 segmented_sort_device_long_segment_sorts_alone > $OUT/memcheck_long_alone.log 2>&1; echo "memcheck rc=$? $((SECONDS-t0))s"; grep -E "ERROR SUMMARY|test result" $OUT/memcheck_long_alone.log
for b in base new; do
  exe=./bench_gpu_mergesort; [ $b = base ] && exe=./bench_base_gpu_mergesort
  for kind in u32 u64 u32-pairs; do
    echo "== $b $kind"
    TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind $exe 2>&1 | grep -E "^\| twophase|copy|panick|rror"
  done
done 2>&1 > $OUT/mergesort_ab.log
for b in base new; do
  exe=./bench_gpu_segmented_sort; [ $b = base ] && exe=./bench_base_gpu_segmented_sort
  for l in 24 27; do
    echo "== $b 2^$l"
    TWOPHASE_BENCH_LOG2N=$l $exe 2>&1 | grep -E "^\| seg|copy rate|panick|rror"
  done
done 2>&1 > $OUT/table_ab.log
for b in base new; do
  exe=./bench_gpu_segmented_sort; [ $b = base ] && exe=./bench_base_gpu_segmented_sort
  echo "== long $b"
  TWOPHASE_BENCH_LONG=1 $exe 2>&1 | grep -E "^long|copy rate|panick|rror"
done 2>&1 > $OUT/long_ab.log
echo done $SECONDS
