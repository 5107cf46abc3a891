# H200: small sorts of u64 keys at VT 19 and u32 pairs at VT 9. The mergesort and adversarial
# tests, memcheck of the pair and u64 sorts at small scale, then the shipped u64 and pair sorts at
# 2^18-2^22 beside the VT before (TWOPHASE_BENCH_VTS: 23 and 11) and CUB's merge sort.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d135.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
timeout 400 .gpu/test_gpu_mergesort --include-ignored --skip stable_block_sort_at_its_shipped_width --skip past_i32 > $OUT/test_gpu_mergesort.log 2>&1 &
timeout 400 .gpu/test_adversarial --include-ignored > $OUT/test_adversarial.log 2>&1 &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_PROFILE_LOG2N=20
TWOPHASE_BENCH_KIND=u32-pairs TWOPHASE_BENCH_VTS=11 timeout 250 .gpu/bench_gpu_mergesort --profile > $OUT/warm_pairs.log 2>&1 &
TWOPHASE_BENCH_KIND=u64 TWOPHASE_BENCH_VTS=23 timeout 250 .gpu/bench_gpu_mergesort --profile > $OUT/warm_u64.log 2>&1 &
wait
for f in $OUT/test_*.log $OUT/warm_*.log; do echo "-- $(basename $f)" >> $log; grep -E "^test result|panicked|FAILED|failed" $f | head -8 >> $log; done
echo "== memcheck" >> $log
TWOPHASE_TEST_SCALE=small timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 .gpu/test_gpu_mergesort --include-ignored \
  --test-threads=1 mergesort_pairs_prove_stability mergesort_u64 mergesort_f64 > $OUT/memcheck.log 2>&1
echo "memcheck rc $?" >> $log
grep -E "ERROR SUMMARY|^test result" $OUT/memcheck.log >> $log
export TWOPHASE_BENCH_SIZES=18,19,20,21,22
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in u64 u32-pairs; do
  TWOPHASE_BENCH_KIND=$kind timeout 60 /tmp/cub_mergesort $OUT/cub_$kind.txt > /dev/null 2>&1
done
cat $OUT/cub_u64.txt $OUT/cub_u32-pairs.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E "merge" $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do
  echo "== round $round" >> $log
  TWOPHASE_BENCH_KIND=u64 TWOPHASE_BENCH_VTS=23 timeout 60 .gpu/bench_gpu_mergesort > $OUT/d135_u64_$round.log 2>&1
  echo "u64 rc $?" >> $log
  TWOPHASE_BENCH_KIND=u32-pairs TWOPHASE_BENCH_VTS=11 timeout 60 .gpu/bench_gpu_mergesort > $OUT/d135_pairs_$round.log 2>&1
  echo "pairs rc $?" >> $log
  grep -hE "^\| twophase|^vt |panicked" $OUT/d135_u64_$round.log $OUT/d135_pairs_$round.log >> $log
done
cd $OUT && tar czf /tmp/d135.tgz . && mv /tmp/d135.tgz $OUT/all.tgz
cat $log
