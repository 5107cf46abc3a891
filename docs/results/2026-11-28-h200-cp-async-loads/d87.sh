# H200: key loads by cp.async in load_tile's rebased form (merge tiles of keys alone, mergesort two-way tiles, sorted search): tests, memcheck, then each benchmark before/after.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d87.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
run_test() {  # name seconds filters...
  local name=$1 secs=$2; shift 2
  local start=$SECONDS
  timeout $secs .gpu/$name --include-ignored --test-threads=1 "$@" > $OUT/d87_$name.log 2>&1
  echo "$name rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d87_$name.log)" >> $log
  grep -E "panicked|FAILED" $OUT/d87_$name.log >> $log
}
run_test test_gpu_merge 60
run_test test_gpu_search 30 sorted_search
run_test test_gpu_mergesort 90 pass_plans pairs_prove user_struct
start=$SECONDS
TWOPHASE_TEST_SCALE=small timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/test_gpu_merge --include-ignored --test-threads=1 --skip 2_pow_27 > $OUT/d87_memcheck.log 2>&1
echo "memcheck merge rc $? in $((SECONDS - start)) s: $(grep -E '^test result|ERROR SUMMARY' $OUT/d87_memcheck.log | tr '\n' ' ')" >> $log
for b in bench_head_gpu_merge bench_gpu_merge; do
  echo "== $b" >> $log
  timeout 70 .gpu/$b > $OUT/d87_$b.log 2>&1
  grep -E "^\| twophase \| (u32|u64|u32-pairs) \||panicked|copy rate" $OUT/d87_$b.log >> $log
done
for b in bench_head_gpu_search bench_gpu_search; do
  echo "== $b" >> $log
  timeout 50 .gpu/$b > $OUT/d87_$b.log 2>&1
  grep -E "\(shipped\)|panicked|copy rate" $OUT/d87_$b.log >> $log
done
export TWOPHASE_BENCH_SHIPPED_ONLY=1
for kind in u32 u32-pairs; do
  for b in bench_head_gpu_mergesort bench_gpu_mergesort; do
    echo "== $b $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind TWOPHASE_BENCH_SIZES=20,24 timeout 30 .gpu/$b > $OUT/d87_ms.log 2>&1
    grep -E "^\| twophase \| $kind \||panicked" $OUT/d87_ms.log >> $log
  done
done
cat $log
