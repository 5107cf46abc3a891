# H100: the tile load's addresses from two slice pointers (load_tile) and the sorted search's 32-bit bound stores: test_gpu_search, test_gpu_merge, memcheck of test_gpu_search, then the search benchmark base and new.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d67.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for t in test_gpu_search test_gpu_merge; do
  timeout 100 .gpu/$t --include-ignored --test-threads=1 > $OUT/d67_$t.log 2>&1
  echo "$t rc $?: $(grep -E 'test result' $OUT/d67_$t.log)" >> $log
done
TWOPHASE_TEST_SCALE=small timeout 80 compute-sanitizer --tool memcheck --error-exitcode 1 .gpu/test_gpu_search --include-ignored --test-threads=1 > $OUT/d67_memcheck.log 2>&1
echo "memcheck test_gpu_search rc $?: $(grep -E 'SUMMARY|test result' $OUT/d67_memcheck.log | tr '\n' ' ')" >> $log
for b in bench_base_gpu_search bench_gpu_search; do
  echo "== $b" >> $log
  timeout 90 .gpu/$b 2>&1 | grep -E "copy rate|shipped\)|256x23 |panicked" >> $log
done
cat $log
