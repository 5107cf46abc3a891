# H200: search budgets of 1024, 1536 and 2048 threads an SM beside the shipped 512 (cuts and
# samples a warp each up to it), two rounds, where the cheaper probe rounds may have moved the
# warp's limit: u64 and u32 pairs at 2^23 and 2^24, u32 and the top-8 comparator at 2^24 and 2^25.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d130.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SEARCH_BUDGETS=1024,1536,2048
for round in 1 2; do
  for kind in u64 u32-pairs; do
    echo "== round $round $kind" >> $log
    TWOPHASE_BENCH_SIZES=23,24 TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/bench_new > $OUT/d130_b.log 2>&1
    echo "rc $?" >> $log
    grep -E "^\| twophase|search budget|panicked" $OUT/d130_b.log >> $log
  done
  for kind in u32 u32-top8; do
    echo "== round $round $kind" >> $log
    TWOPHASE_BENCH_SIZES=24,25 TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/bench_new > $OUT/d130_b.log 2>&1
    echo "rc $?" >> $log
    grep -E "^\| twophase|search budget|panicked" $OUT/d130_b.log >> $log
  done
done
cat $log
