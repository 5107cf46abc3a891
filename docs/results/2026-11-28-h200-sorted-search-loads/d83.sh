# H200: the sorted search tile's rebased loads and unchecked full-tile walk: sorted search tests, adversarial search tests, memcheck, then HEAD's search bench and the change alternating twice.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d83.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
run_test() {  # name seconds filters...
  local name=$1 secs=$2; shift 2
  local start=$SECONDS
  timeout $secs .gpu/$name --include-ignored --test-threads=1 "$@" > $OUT/d83_$name.log 2>&1
  echo "$name rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d83_$name.log)" >> $log
  grep -E "^test |panicked" $OUT/d83_$name.log >> $log
}
run_test test_gpu_search 120 sorted_search
run_test test_adversarial 150 search
start=$SECONDS
TWOPHASE_TEST_SCALE=small timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 .gpu/test_gpu_search --include-ignored --test-threads=1 sorted_search_unsorted sorted_search_broken sorted_search_matches > $OUT/d83_memcheck.log 2>&1
echo "memcheck rc $? in $((SECONDS - start)) s: $(grep -E '^test result|ERROR SUMMARY' $OUT/d83_memcheck.log | tr '\n' ' ')" >> $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1
for b in bench_head_gpu_search bench_gpu_search bench_head_gpu_search bench_gpu_search; do
  echo "== $b" >> $log
  timeout 100 .gpu/$b > $OUT/d83_$b.log 2>&1
  grep -E "shipped|panicked|copy rate" $OUT/d83_$b.log >> $log
done
cat $log
