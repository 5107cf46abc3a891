# H200: the GPU mergesort tests on 3f51b43, then u32 under the two user comparators at 2^23 (the one other power-of-two size whose lanes the warp thresholds change: 1772 two-way boundaries a pass, now a warp each) and 2^24, shipped against the 384 budgets in the same process, three rounds.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d111.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
start=$SECONDS
timeout 280 .gpu/test_gpu_mergesort --include-ignored > $OUT/d111_tests.log 2>&1
echo "test_gpu_mergesort rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d111_tests.log)" >> $log
grep -E "FAILED|panicked" $OUT/d111_tests.log >> $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=23,24 TWOPHASE_BENCH_SEARCH_BUDGETS=384
for round in 1 2 3; do
  for kind in u32-top8 u32-user; do
    echo "== round $round $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/bench_gpu_mergesort > $OUT/d111_b.log 2>&1
    echo "rc $?" >> $log
    grep -E "^\| twophase|^search budget|panicked|copy rate" $OUT/d111_b.log >> $log
  done
done
cat $log
