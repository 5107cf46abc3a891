# H200: four-way passes from 32 MiB of 8-byte elements (shipped) against 64 MiB (before, TWOPHASE_BENCH_FOUR_WAY_BYTES=67108864) in the same process: the GPU mergesort tests, then u64, f64 and u32 pairs at 2^21-2^23, two rounds.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d115.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
start=$SECONDS
timeout 250 .gpu/test_gpu_mergesort --include-ignored > $OUT/d115_tests.log 2>&1
echo "test_gpu_mergesort rc $? in $((SECONDS - start)) s: $(grep -E '^test result' $OUT/d115_tests.log)" >> $log
grep -E "FAILED|panicked" $OUT/d115_tests.log >> $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=21,22,23 TWOPHASE_BENCH_FOUR_WAY_BYTES=67108864
for round in 1 2; do
  for kind in u64 f64 u32-pairs; do
    echo "== round $round $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/bench_gpu_mergesort > $OUT/d115_b.log 2>&1
    echo "rc $?" >> $log
    grep -E "^\| twophase|^four-way|panicked|copy rate" $OUT/d115_b.log >> $log
  done
done
cat $log
