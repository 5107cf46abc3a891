# H200: the GPU test of the shipped stable block-sort width (VT 37) on 47e6c7d; then four-way passes from every size (TWOPHASE_BENCH_FOUR_WAY_BYTES=0) beside the shipped tuning (from 64 MiB) at 2^21-2^23 for u32, u64, u32 pairs and u32 under the two user comparators, in the same process, two rounds.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d114.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
start=$SECONDS
timeout 200 .gpu/test_gpu_mergesort --include-ignored --exact mergesort_stable_block_sort_at_its_shipped_width > $OUT/d114_tests.log 2>&1
echo "test_gpu_mergesort mergesort_stable_block_sort_at_its_shipped_width rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d114_tests.log)" >> $log
grep -E "FAILED|panicked" $OUT/d114_tests.log >> $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=21,22,23 TWOPHASE_BENCH_FOUR_WAY_BYTES=0
for round in 1 2; do
  for kind in u32 u64 u32-pairs u32-top8 u32-user; do
    echo "== round $round $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/bench_gpu_mergesort > $OUT/d114_b.log 2>&1
    echo "rc $?" >> $log
    grep -E "^\| twophase|^four-way|panicked|copy rate" $OUT/d114_b.log >> $log
  done
done
cat $log
