# H200: the u64 keys' two-way tile bound to 80 registers where its tiles are more than two an SM
# (shipped) beside the compiler's registers (pass_registers 0), u64 and f64 at 2^20, 2^21, 2^23,
# 2^24, 2^27 and 1.5 x 2^20 and 2^21, two rounds, CUB's merge and radix sorts in the command;
# before that test_gpu_mergesort, the adversarial float sorts and memcheck of the u64 and float
# sorts.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d144.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_PASS_REGISTERS=0
warm() { TWOPHASE_BENCH_KIND=$1 TWOPHASE_PROFILE_LOG2N=$2 timeout 300 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$1_$2.log 2>&1; }
for k in u64 f64; do warm $k 21 & warm $k 23 & warm $k 24 & done
(timeout 300 .gpu/test_adversarial --include-ignored floats_partial_order_sorts > $OUT/test_adversarial.log 2>&1; echo "test_adversarial rc $?" >> $log) &
(timeout 300 compute-sanitizer --tool memcheck --print-limit 20 .gpu/test_gpu_mergesort --include-ignored --exact mergesort_u64 mergesort_f64 > $OUT/memcheck.log 2>&1; echo "memcheck rc $?" >> $log) &
timeout 400 .gpu/test_gpu_mergesort --include-ignored > $OUT/test_gpu_mergesort.log 2>&1; echo "test_gpu_mergesort rc $?" >> $log
wait
grep -hE "^test result|FAILED|panicked" $OUT/test_gpu_mergesort.log $OUT/test_adversarial.log >> $log
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
grep -E "ERROR SUMMARY|^test result" $OUT/memcheck.log >> $log
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for k in u64 f64; do TWOPHASE_BENCH_SIZES=20,21,23,24,27 TWOPHASE_BENCH_KIND=$k timeout 100 /tmp/cub_mergesort $OUT/cub_$k.txt > /dev/null 2>&1; done
cat $OUT/cub_u64.txt $OUT/cub_f64.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E "merge-(u64|f64) |radix" $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do
  for k in u64 f64; do
    TWOPHASE_BENCH_SIZES=20,21,23,24,27 TWOPHASE_BENCH_KIND=$k timeout 120 .gpu/bench_gpu_mergesort > $OUT/s_${k}_$round.log 2>&1
    echo "$k round $round rc $?" >> $log
    grep -hE "^\| twophase \| [a-z0-9]+ \||^pass registers|panicked" $OUT/s_${k}_$round.log >> $log
    TWOPHASE_BENCH_SCALE=1.5 TWOPHASE_BENCH_SIZES=20,21 TWOPHASE_BENCH_KIND=$k timeout 60 .gpu/bench_gpu_mergesort > $OUT/x_${k}_$round.log 2>&1
    echo "$k x1.5 round $round rc $?" >> $log
    grep -hE "^\| twophase \| [a-z0-9]+ \||^pass registers|panicked" $OUT/x_${k}_$round.log >> $log
  done
done
cd $OUT && tar czf /tmp/d144.tgz . && mv /tmp/d144.tgz $OUT/all.tgz
cat $log
