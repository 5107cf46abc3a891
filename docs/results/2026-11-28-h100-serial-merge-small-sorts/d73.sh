# H100: a checked order's small sorts with tile blocks that find their own boundaries (ends recorded, neighbours checked): HEAD (a595b89) and new alternating for the user comparators at 2^20-2^22, then the adversarial and mergesort GPU tests.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d73.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=20,21,22
for kind in u32-top8 u32-user; do
  for b in bench_head_gpu_mergesort bench_gpu_mergesort bench_head_gpu_mergesort bench_gpu_mergesort; do
    echo "== $b $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 40 .gpu/$b > $OUT/d73_b.log 2>&1
    grep -E "^\| twophase|panicked" $OUT/d73_b.log >> $log
  done
done
timeout 100 .gpu/test_adversarial --include-ignored --test-threads=1 inconsistent > $OUT/d73_adversarial.log 2>&1
echo "test_adversarial inconsistent rc $?: $(grep -E '^test result' $OUT/d73_adversarial.log)" >> $log
grep -E "^test |panicked" $OUT/d73_adversarial.log >> $log
timeout 60 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 user pairs_prove top_bits descending > $OUT/d73_mergesort.log 2>&1
echo "test_gpu_mergesort rc $?: $(grep -E '^test result' $OUT/d73_mergesort.log)" >> $log
grep -E "^test |panicked" $OUT/d73_mergesort.log >> $log
timeout 30 .gpu/test_gpu_comparator --include-ignored --test-threads=1 > $OUT/d73_comparator.log 2>&1
echo "test_gpu_comparator rc $?: $(grep -E '^test result' $OUT/d73_comparator.log)" >> $log
cat $log
