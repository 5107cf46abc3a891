# H100: racecheck and memcheck on the mergesort tests whose keys alone take the stable slot sort (user struct, wide records, top 8 bits), small scale.
cd "$(dirname "$0")/.."
log=$OUT/d51.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
source .gpu/env.sh
for tool in memcheck racecheck; do
  for t in user_struct wide_records; do
    TWOPHASE_TEST_SCALE=small timeout $([ $tool = memcheck ] && echo 90 || echo 180) /usr/local/cuda/bin/compute-sanitizer --tool $tool --error-exitcode 1 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 $t > $OUT/d51_${tool}_$t.log 2>&1
    echo "$tool $t rc $?: $(grep -E 'SUMMARY|test result' $OUT/d51_${tool}_$t.log | tr '\n' ' ')" >> $log
  done
done
cat $log
