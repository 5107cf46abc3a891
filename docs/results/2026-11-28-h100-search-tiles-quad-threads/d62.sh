# H100: the sorted search's tile in dynamic shared memory (tiles past 48 KiB) and the larger-tile sweeps of the sorted and load-balancing searches; test_gpu_search and its memcheck first.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d62.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
timeout 150 .gpu/test_gpu_search --include-ignored --test-threads=1 > $OUT/d62_test_gpu_search.log 2>&1
echo "tests rc $?: $(grep -E 'test result' $OUT/d62_test_gpu_search.log)" >> $log
TWOPHASE_TEST_SCALE=small timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 .gpu/test_gpu_search --include-ignored --test-threads=1 > $OUT/d62_memcheck.log 2>&1
echo "memcheck rc $?: $(grep -E 'SUMMARY|test result' $OUT/d62_memcheck.log | tr '\n' ' ')" >> $log
for run in 1 2; do
  echo "== bench_gpu_search run $run" >> $log
  timeout 150 .gpu/bench_gpu_search >> $log 2>&1
  echo "rc $?" >> $log
done
cat $log
