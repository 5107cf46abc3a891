# H100: the mergesort GPU tests with the four-way cut's probe rounds, then memcheck (small scale) on the pass-plan test (every lane count, tiny tiles) and the wide-record test (24-byte keys through four-way passes).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d57.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
timeout 400 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 > $OUT/d57_test_gpu_mergesort.log 2>&1
echo "tests rc $?: $(grep -E 'test result' $OUT/d57_test_gpu_mergesort.log)" >> $log
grep -E "^test .*(FAILED|ok)$" $OUT/d57_test_gpu_mergesort.log | head -40 >> $log
for t in pass_plans wide_records; do
  TWOPHASE_TEST_SCALE=small timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 $t > $OUT/d57_memcheck_$t.log 2>&1
  echo "memcheck $t rc $?: $(grep -E 'SUMMARY|test result' $OUT/d57_memcheck_$t.log | tr '\n' ' ')" >> $log
done
cat $log
