# H100: the stable slot sort for keys alone whose equivalents differ. test_gpu_mergesort, then racecheck and memcheck on the top-8 test (small scale).
cd "$(dirname "$0")/.."
log=$OUT/d46.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
timeout 300 bash .gpu/run.sh test_gpu_mergesort > $OUT/d46_run.log 2>&1
grep -E "test result|FAILED|panicked|^test .*(ok|FAILED)$" $OUT/d46_run.log >> $log
source .gpu/env.sh
for tool in racecheck memcheck; do
  TWOPHASE_TEST_SCALE=small timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --error-exitcode 1 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 top_bits > $OUT/d46_$tool.log 2>&1
  echo "$tool rc $?: $(grep -E 'SUMMARY|test result' $OUT/d46_$tool.log | tr '\n' ' ')" >> $log
done
cat $log
