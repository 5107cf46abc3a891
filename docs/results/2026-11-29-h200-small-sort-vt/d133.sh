# H200: small sorts at VT 17 (21 where equivalents may differ). The mergesort, comparator and
# adversarial float/inconsistent-comparator tests, memcheck of small sorts, then the shipped sorts
# at 2^18-2^22 beside VT 23 (TWOPHASE_BENCH_VTS=23: the tuning before) and CUB's merge sort.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d133.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
timeout 330 .gpu/test_gpu_mergesort --include-ignored --skip stable_block_sort_at_its_shipped_width --skip past_i32 > $OUT/test_gpu_mergesort.log 2>&1 &
timeout 330 .gpu/test_adversarial --include-ignored floats_ inconsistent_comparators checks_catch > $OUT/test_adversarial.log 2>&1 &
timeout 330 .gpu/test_gpu_comparator --include-ignored > $OUT/test_gpu_comparator.log 2>&1 &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_VTS=23
for kind in u32 f32 u32-top8 u32-user; do
  TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=20 timeout 250 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$kind.log 2>&1 &
done
wait
for f in $OUT/test_*.log $OUT/warm_*.log; do echo "-- $(basename $f)" >> $log; grep -E "^test result|panicked|FAILED|failed" $f | head -8 >> $log; done
echo "== memcheck" >> $log
TWOPHASE_TEST_SCALE=small timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 .gpu/test_gpu_mergesort --include-ignored \
  --test-threads=1 mergesort_floats_sort_as_integer_images mergesort_pairs_prove_stability > $OUT/memcheck.log 2>&1
echo "memcheck rc $?" >> $log
grep -E "ERROR SUMMARY|^test result" $OUT/memcheck.log >> $log
export TWOPHASE_BENCH_SIZES=18,19,20,21,22
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in u32 f32 u32-top8 u32-pairs; do
  TWOPHASE_BENCH_KIND=$kind timeout 60 /tmp/cub_mergesort $OUT/cub_$kind.txt > /dev/null 2>&1
done
cat $OUT/cub_u32.txt $OUT/cub_f32.txt $OUT/cub_u32-top8.txt $OUT/cub_u32-pairs.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E "merge" $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do
  echo "== round $round" >> $log
  for kind in u32 f32 u32-top8 u32-user; do
    TWOPHASE_BENCH_KIND=$kind timeout 60 .gpu/bench_gpu_mergesort > $OUT/d133_${kind}_$round.log 2>&1
    echo "$kind rc $?" >> $log
    grep -hE "^\| twophase|^vt |panicked" $OUT/d133_${kind}_$round.log >> $log
  done
done
unset TWOPHASE_BENCH_VTS
TWOPHASE_BENCH_KIND=u32-pairs timeout 60 .gpu/bench_gpu_mergesort > $OUT/d133_pairs.log 2>&1
grep -hE "^\| twophase|panicked" $OUT/d133_pairs.log >> $log
cd $OUT && tar czf /tmp/d133.tgz --exclude='*.tgz' . && mv /tmp/d133.tgz $OUT/all.tgz
cat $log
