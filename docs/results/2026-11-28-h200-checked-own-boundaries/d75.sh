# H200: the branch's checked small sorts (tile blocks record their own boundaries, the pass after checks them): the GPU tests that sort under user and inconsistent comparators, then memcheck on the device sorts under them.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d75.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
run_test() {  # name seconds filters...
  local name=$1 secs=$2; shift 2
  local start=$SECONDS
  timeout $secs .gpu/$name --include-ignored --test-threads=1 "$@" > $OUT/d75_$name.log 2>&1
  echo "$name rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d75_$name.log)" >> $log
  grep -E "^test |panicked" $OUT/d75_$name.log >> $log
}
run_test test_gpu_comparator 40
run_test test_gpu_mergesort 170 --skip 2_pow_27 --skip past_i32_max
run_test test_adversarial 250 inconsistent_comparators_ tiles_block_sort checks_catch floats_partial_order_sorts
start=$SECONDS
TWOPHASE_TEST_SCALE=small timeout 110 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/test_adversarial --include-ignored --test-threads=1 inconsistent_comparators_device_sorts > $OUT/d75_memcheck.log 2>&1
echo "memcheck test_adversarial inconsistent_comparators_device_sorts rc $? in $((SECONDS - start)) s: $(grep -E '^test result|ERROR SUMMARY' $OUT/d75_memcheck.log | tr '\n' ' ')" >> $log
cat $log
