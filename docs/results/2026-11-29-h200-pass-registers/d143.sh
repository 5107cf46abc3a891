# H200: u64 and f64 sorts with the two-way pass tile's registers bounded (pass_registers 64: four
# 256-thread blocks an SM; 80: three) beside the shipped tile (106 registers at VT 23, two blocks)
# and beside VT 21 (80 registers for u64 by the compiler's own choice), at 2^20, 2^21 and 1.5
# times them (every pass two-way) and 2^23 (one two-way pass); CUB's merge sort in the command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d143.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_PASS_REGISTERS=64,80 TWOPHASE_BENCH_VTS=21
warm() { TWOPHASE_BENCH_KIND=$1 TWOPHASE_PROFILE_LOG2N=$2 timeout 300 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$1_$2.log 2>&1; }
for k in u64 f64; do warm $k 20 & warm $k 21 & warm $k 23 & done
wait
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for k in u64 f64; do TWOPHASE_BENCH_SIZES=20,21,23 TWOPHASE_BENCH_KIND=$k timeout 60 /tmp/cub_mergesort $OUT/cub_$k.txt > /dev/null 2>&1; done
cat $OUT/cub_u64.txt $OUT/cub_f64.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep merge $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do
  for scale in 1.0 1.5; do
    for k in u64 f64; do
      sizes=20,21; [ $scale = 1.0 ] && sizes=20,21,23
      TWOPHASE_BENCH_SCALE=$scale TWOPHASE_BENCH_SIZES=$sizes TWOPHASE_BENCH_KIND=$k timeout 90 .gpu/bench_gpu_mergesort > $OUT/r_${k}_${scale}_$round.log 2>&1
      echo "$k $scale round $round rc $?" >> $log
      grep -hE "^\| twophase \| [a-z0-9]+ \||^vt |^pass registers|panicked" $OUT/r_${k}_${scale}_$round.log >> $log
    done
  done
done
cd $OUT && tar czf /tmp/d143.tgz . && mv /tmp/d143.tgz $OUT/all.tgz
cat $log
