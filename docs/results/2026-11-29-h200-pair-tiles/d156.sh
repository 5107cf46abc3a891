# H200: 8-byte keys' 256 x 23 block sort bound to 64 registers past the small sorts (shipped)
# against the compiler's 80 (TWOPHASE_BENCH_BLOCK_REGISTERS=0), u64 and f64 at 2^20-2^24 and 2^27,
# two rounds; CUB's merge and radix sorts built and run in the command. First test_gpu_mergesort in
# full and memcheck of the u64 and f64 differential tests at the small test scale.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d156.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
(TWOPHASE_TEST_SCALE=small timeout 300 compute-sanitizer --tool memcheck --print-limit 20 .gpu/test_gpu_mergesort --include-ignored --test-threads=1 --exact mergesort_u64 mergesort_f64 > $OUT/memcheck.log 2>&1; echo "memcheck rc $?" >> $log) &
(timeout 300 .gpu/test_gpu_mergesort --include-ignored > $OUT/test_gpu_mergesort.log 2>&1; echo "test_gpu_mergesort rc $?" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1
for k in u64 f64; do for n in 21 22 23 24 27; do TWOPHASE_BENCH_BLOCK_REGISTERS=0 TWOPHASE_BENCH_KIND=$k TWOPHASE_PROFILE_LOG2N=$n timeout 200 .gpu/bench_fin --profile > $OUT/warm_${k}_$n.log 2>&1 & done; done
wait
grep -E "^test result|panicked|FAILED|failed" $OUT/test_gpu_mergesort.log >> $log
grep -E "ERROR SUMMARY|^test result|panicked" $OUT/memcheck.log >> $log
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
echo "warm done $(date +%T)" >> $log
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
TWOPHASE_BENCH_SIZES=20,21,22,23,24,27 TWOPHASE_BENCH_KIND=u64,f64 timeout 150 /tmp/cub_mergesort $TWOPHASE_CUB_SORT_RESULTS > $OUT/cub.log 2>&1
echo "cub rc $?" >> $log
grep -E " (20|21|22|23|24|27) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do for k in u64 f64; do
  TWOPHASE_BENCH_SIZES=20,21,22,23,24,27 TWOPHASE_BENCH_KIND=$k TWOPHASE_BENCH_BLOCK_REGISTERS=0 timeout 120 .gpu/bench_fin > $OUT/bench_${k}_$round.log 2>&1
  echo "$k round $round rc $?" >> $log
  grep -hE "^device|^\| twophase \| [a-z0-9+-]+ \||^block registers|panicked" $OUT/bench_${k}_$round.log >> $log
done; done
(cd $OUT && tar czf /tmp/all.tgz *.log *.txt && find . -type f ! -name d156.log -delete && mv /tmp/all.tgz .)
cat $log
