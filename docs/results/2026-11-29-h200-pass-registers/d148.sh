# H200: the register bound computed after an order's VT (top-8-bit and `a < b` user comparators
# at VT 21), shipped beside the compiler's registers at 2^20 and 2^21 with u32 and f32, two
# rounds, CUB's merge sort in the command; before that test_gpu_mergesort.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d148.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_PASS_REGISTERS=0
warm() { TWOPHASE_BENCH_KIND=$1 TWOPHASE_PROFILE_LOG2N=$2 timeout 300 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$1_$2.log 2>&1; }
for k in u32 f32 u32-top8 u32-user; do for n in 20 21; do warm $k $n & done; done
timeout 400 .gpu/test_gpu_mergesort --include-ignored > $OUT/test_gpu_mergesort.log 2>&1; echo "test_gpu_mergesort rc $?" >> $log
wait
grep -hE "^test result|FAILED|panicked" $OUT/test_gpu_mergesort.log >> $log
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for k in u32 f32 u32-top8; do TWOPHASE_BENCH_SIZES=20,21 TWOPHASE_BENCH_KIND=$k timeout 60 /tmp/cub_mergesort $OUT/cub_$k.txt > /dev/null 2>&1; done
cat $OUT/cub_u32.txt $OUT/cub_f32.txt $OUT/cub_u32-top8.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E "merge-(u32|f32|u32-top8) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do
  for k in u32 f32 u32-top8 u32-user; do
    TWOPHASE_BENCH_SIZES=20,21 TWOPHASE_BENCH_KIND=$k timeout 60 .gpu/bench_gpu_mergesort > $OUT/s_${k}_$round.log 2>&1
    echo "$k round $round rc $?" >> $log
    grep -hE "^\| twophase \| [a-z0-9-]+ \||^pass registers|panicked" $OUT/s_${k}_$round.log >> $log
  done
done
cat $log
