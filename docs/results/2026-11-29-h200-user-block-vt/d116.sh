# H200: memcheck over the GPU test of the shipped stable block-sort width (1024 x 37 under the top-8-bit user comparator, few-tile sorts at TWOPHASE_TEST_SCALE=small), then the test at full scale.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d116.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
start=$SECONDS
TWOPHASE_TEST_SCALE=small timeout 280 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 1 \
  .gpu/test_gpu_mergesort --include-ignored --test-threads=1 --exact mergesort_stable_block_sort_at_its_shipped_width > $OUT/d116_memcheck.log 2>&1
echo "memcheck rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d116_memcheck.log) $(grep 'ERROR SUMMARY' $OUT/d116_memcheck.log)" >> $log
start=$SECONDS
timeout 60 .gpu/test_gpu_mergesort --include-ignored --exact mergesort_stable_block_sort_at_its_shipped_width > $OUT/d116_tests.log 2>&1
echo "full scale rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d116_tests.log)" >> $log
cat $log
