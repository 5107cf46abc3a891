# H200: the 4-byte keys' two-way tile beside the 1024-thread block sort bound to 64 registers
# (shipped) beside the compiler's 96 (pass_registers 0): u32, f32 and the top-8-bit comparator at
# 2^20, 2^24 and 2^27, CUB's merge and radix sorts built and run in the command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d149.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_PASS_REGISTERS=0
warm() { TWOPHASE_BENCH_KIND=$1 TWOPHASE_PROFILE_LOG2N=$2 timeout 200 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$1_$2.log 2>&1; }
for k in u32 f32 u32-top8; do for n in 20 24 27; do warm $k $n & done; done
wait
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for k in u32 f32 u32-top8; do TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=$k timeout 60 /tmp/cub_mergesort $OUT/cub_$k.txt > /dev/null 2>&1; done
cat $OUT/cub_u32.txt $OUT/cub_f32.txt $OUT/cub_u32-top8.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E " (20|24|27) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for k in u32 f32 u32-top8; do
  TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=$k timeout 90 .gpu/bench_gpu_mergesort > $OUT/s_$k.log 2>&1
  echo "$k rc $?" >> $log
  grep -hE "^device|^\| twophase \| [a-z0-9-]+ \||^pass registers|panicked" $OUT/s_$k.log >> $log
done
cat $log
