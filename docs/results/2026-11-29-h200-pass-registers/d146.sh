# H200: small sorts' two-way tile with more registers than the compiler takes (64, 80, 96, 128
# registers a thread: eight, six, five, four 128-thread blocks an SM) beside the shipped tile, u32
# and f32 under their orders, the top-8-bit and `a < b` user comparators at 2^19, 2^20 and 2^21,
# two rounds, CUB's merge sort in the command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d146.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_PASS_REGISTERS=64,80,96,128
warm() { TWOPHASE_BENCH_KIND=$1 TWOPHASE_PROFILE_LOG2N=$2 TWOPHASE_BENCH_PASS_REGISTERS=$3 timeout 300 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$1_$3.log 2>&1; }
for k in u32 f32 u32-top8 u32-user; do for r in 64 80 96 128; do warm $k 20 $r & done; done
wait
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for k in u32 f32 u32-top8; do TWOPHASE_BENCH_SIZES=19,20,21 TWOPHASE_BENCH_KIND=$k timeout 60 /tmp/cub_mergesort $OUT/cub_$k.txt > /dev/null 2>&1; done
cat $OUT/cub_u32.txt $OUT/cub_f32.txt $OUT/cub_u32-top8.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E "merge-(u32|f32|u32-top8) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do
  for k in u32 f32 u32-top8 u32-user; do
    TWOPHASE_BENCH_SIZES=19,20,21 TWOPHASE_BENCH_KIND=$k timeout 120 .gpu/bench_gpu_mergesort > $OUT/s_${k}_$round.log 2>&1
    echo "$k round $round rc $?" >> $log
    grep -hE "^\| twophase \| [a-z0-9-]+ \||^pass registers|panicked" $OUT/s_${k}_$round.log >> $log
  done
done
cd $OUT && tar czf /tmp/d146.tgz . && mv /tmp/d146.tgz $OUT/all.tgz
cat $log
