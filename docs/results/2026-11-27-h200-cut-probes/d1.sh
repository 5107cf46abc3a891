#!/usr/bin/env bash
# Tests: the device-call long-segment test on the shipped segmented sort, the mergesort and
# comparator tests on the narrowed cuts, then memcheck on both at reduced sizes.
set -u
cd "$(dirname "$0")"
source ./env.sh
t0=$SECONDS
run() { local name=$1; shift; echo "== $name $*"; local s=$SECONDS
  ./$name --include-ignored --test-threads=1 "$@" > $OUT/$name$([ $# -gt 0 ] && echo _filtered).log 2>&1; local rc=$?
  grep -E "^test .*(FAILED|panicked)|test result|panicked" $OUT/$name$([ $# -gt 0 ] && echo _filtered).log | head -20; echo "rc=$rc $((SECONDS-s))s"; }
run test_gpu_segmented_sort segmented_sort_device_long_segments_match_std
run test_gpu_mergesort
run test_gpu_comparator
for t in test_gpu_mergesort "test_gpu_segmented_sort segmented_sort_device_long_segments_match_std"; do
  set -- $t; s=$SECONDS
  echo "== memcheck $t"
  TWOPHASE_TEST_SCALE=small compute-sanitizer --tool memcheck --print-limit 20 ./$1 --include-ignored --test-threads=1 ${2:-} > $OUT/memcheck_$1.log 2>&1
  echo "rc=$? $((SECONDS-s))s"; grep -E "ERROR SUMMARY|test result" $OUT/memcheck_$1.log | tail -3
done
echo "total $((SECONDS-t0))s"
