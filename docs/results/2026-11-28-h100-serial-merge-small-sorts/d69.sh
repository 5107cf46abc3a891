# H100: the pointer-form serial merge against HEAD (a595b89): GPU tests (mergesort, merge, adversarial), then the shipped sorts alternating.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d69.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for t in test_gpu_mergesort test_gpu_merge test_adversarial; do
  timeout 200 .gpu/$t --include-ignored --test-threads=1 > $OUT/d69_$t.log 2>&1
  echo "$t rc $?: $(grep -E '^test result' $OUT/d69_$t.log | tr '\n' ' ')" >> $log
done
export TWOPHASE_BENCH_SHIPPED_ONLY=1
for kind in u32 u64 u32-pairs; do
  if [ $kind = u32 ]; then export TWOPHASE_BENCH_SIZES=24,27; else export TWOPHASE_BENCH_SIZES=27; fi
  for b in bench_head_gpu_mergesort bench_gpu_mergesort bench_head_gpu_mergesort bench_gpu_mergesort; do
    echo "== $b $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 120 .gpu/$b > $OUT/d69_b.log 2>&1
    grep -E "^\| twophase|copy rate|panicked" $OUT/d69_b.log >> $log
  done
done
cat $log
