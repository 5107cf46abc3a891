# H200: the branch with a separate recorded tile kernel (the plain one as before): HEAD (main) and the branch alternating for the user comparators at 2^20-2^22 and u32 at 2^20, then the GPU tests under user and inconsistent comparators and memcheck of the device sorts.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d78.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1
bench_pair() {  # kind sizes
  for b in bench_head_gpu_mergesort bench_gpu_mergesort bench_head_gpu_mergesort bench_gpu_mergesort; do
    echo "== $b $1" >> $log
    TWOPHASE_BENCH_KIND=$1 TWOPHASE_BENCH_SIZES=$2 timeout 40 .gpu/$b > $OUT/d78_b.log 2>&1
    grep -E "^\| twophase|panicked|copy rate" $OUT/d78_b.log >> $log
  done
}
bench_pair u32-top8 20,21,22
bench_pair u32-user 20,21,22
bench_pair u32-pairs 20
run_test() {  # name seconds filters...
  local name=$1 secs=$2; shift 2
  local start=$SECONDS
  timeout $secs .gpu/$name --include-ignored --test-threads=1 "$@" > $OUT/d78_$name.log 2>&1
  echo "$name rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d78_$name.log)" >> $log
  grep -E "^test |panicked" $OUT/d78_$name.log >> $log
}
run_test test_gpu_comparator 30
run_test test_gpu_mergesort 60 user top_bits pairs_prove descending
run_test test_adversarial 300 inconsistent_comparators_
start=$SECONDS
TWOPHASE_TEST_SCALE=small timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/test_adversarial --include-ignored --test-threads=1 inconsistent_comparators_device_sorts > $OUT/d78_memcheck.log 2>&1
echo "memcheck rc $? in $((SECONDS - start)) s: $(grep -E '^test result|ERROR SUMMARY' $OUT/d78_memcheck.log | tr '\n' ' ')" >> $log
cat $log
