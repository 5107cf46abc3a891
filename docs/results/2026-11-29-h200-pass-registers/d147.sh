# H200: the two-way tile at the most registers that run all its tiles at once (shipped) beside
# the compiler's registers (pass_registers 0): u32, f32, u64, f64, the top-8-bit and `a < b` user
# comparators at 2^19-2^22 and 2^24, two rounds, CUB's merge and radix sorts in the command; before
# that test_gpu_mergesort, the adversarial host sorts under inconsistent comparators and of floats
# under `<`, and memcheck of the u32 and u64 differential tests.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d147.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_PASS_REGISTERS=0
warm() { TWOPHASE_BENCH_KIND=$1 TWOPHASE_PROFILE_LOG2N=$2 timeout 300 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$1_$2.log 2>&1; }
for k in u32 f32 u64 f64 u32-top8 u32-user; do for n in 19 20 21 22 24; do warm $k $n & done; done
(timeout 400 .gpu/test_adversarial --include-ignored inconsistent_comparators_sorts_keep floats_partial_order_sorts > $OUT/test_adversarial.log 2>&1; echo "test_adversarial rc $?" >> $log) &
(timeout 400 compute-sanitizer --tool memcheck --print-limit 20 .gpu/test_gpu_mergesort --include-ignored --exact mergesort_u32 mergesort_u64 > $OUT/memcheck.log 2>&1; echo "memcheck rc $?" >> $log) &
timeout 420 .gpu/test_gpu_mergesort --include-ignored > $OUT/test_gpu_mergesort.log 2>&1; echo "test_gpu_mergesort rc $?" >> $log
wait
grep -hE "^test result|FAILED|panicked" $OUT/test_gpu_mergesort.log $OUT/test_adversarial.log >> $log
grep -E "ERROR SUMMARY|^test result" $OUT/memcheck.log >> $log
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for k in u32 f32 u64 f64 u32-top8; do TWOPHASE_BENCH_SIZES=19,20,21,22,24 TWOPHASE_BENCH_KIND=$k timeout 60 /tmp/cub_mergesort $OUT/cub_$k.txt > /dev/null 2>&1; done
cat $OUT/cub_u32.txt $OUT/cub_f32.txt $OUT/cub_u64.txt $OUT/cub_f64.txt $OUT/cub_u32-top8.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E "merge-(u32|f32|u64|f64|u32-top8) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do
  for k in u32 f32 u64 f64 u32-top8 u32-user; do
    TWOPHASE_BENCH_SIZES=19,20,21,22,24 TWOPHASE_BENCH_KIND=$k timeout 90 .gpu/bench_gpu_mergesort > $OUT/s_${k}_$round.log 2>&1
    echo "$k round $round rc $?" >> $log
    grep -hE "^\| twophase \| [a-z0-9-]+ \||^pass registers|panicked" $OUT/s_${k}_$round.log >> $log
  done
done
cd $OUT && tar czf /tmp/d147.tgz . && mv /tmp/d147.tgz $OUT/all.tgz
cat $log
