# H200: small sorts of pairs with an 8-byte key or value at VT 11 (shipped) beside VT 15
# (TWOPHASE_BENCH_VTS=15, the tuning before), u32 keys with u64 values and u64 keys with u32 and
# u64 values at 2^19, 2^20 and 2^21; CUB's merge sorts of the same pairs built and run in the
# command. First test_gpu_mergesort in full and memcheck of the pair test at the small test scale.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d158.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
(TWOPHASE_TEST_SCALE=small timeout 200 compute-sanitizer --tool memcheck --print-limit 20 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 --exact mergesort_pairs_prove_stability > $OUT/memcheck.log 2>&1; echo "memcheck rc $?" >> $log) &
(timeout 220 .gpu/test_gpu_mergesort --include-ignored > $OUT/test_gpu_mergesort.log 2>&1; echo "test_gpu_mergesort rc $?" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_VTS=15
kinds="u32+u64 u64+u32 u64+u64"
for k in $kinds; do for n in 19 20 21; do TWOPHASE_BENCH_KIND=$k TWOPHASE_PROFILE_LOG2N=$n timeout 150 .gpu/bench_fin --profile > $OUT/warm_${k//+/_}_$n.log 2>&1 & done; done
wait
grep -E "^test result|panicked|FAILED|failed" $OUT/test_gpu_mergesort.log >> $log
grep -E "ERROR SUMMARY|^test result|panicked" $OUT/memcheck.log >> $log
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
echo "warm done $(date +%T)" >> $log
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
TWOPHASE_BENCH_SIZES=19,20,21 TWOPHASE_BENCH_KIND=u32+u64,u64+u32,u64+u64 timeout 60 /tmp/cub_mergesort $TWOPHASE_CUB_SORT_RESULTS > $OUT/cub.log 2>&1
echo "cub rc $?" >> $log
grep -E "cub-merge-[a-z0-9+]+ (19|20|21) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for k in $kinds; do
  TWOPHASE_BENCH_SIZES=19,20,21 TWOPHASE_BENCH_KIND=$k timeout 60 .gpu/bench_fin > $OUT/bench_${k//+/_}.log 2>&1
  echo "$k rc $?" >> $log
  grep -hE "^device|^\| twophase \| [a-z0-9+]+ \||^vt |panicked" $OUT/bench_${k//+/_}.log >> $log
done
(cd $OUT && tar czf /tmp/all.tgz *.log *.txt && find . -type f ! -name d158.log -delete && mv /tmp/all.tgz .)
cat $log
