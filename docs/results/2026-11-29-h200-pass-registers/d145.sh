# H200: the two-way tile's register bound for 4-byte keys (128-thread tiles: 64 registers, eight
# blocks an SM; 80, six) beside the compiler's registers, u32 under Less, the top-8-bit and the
# `a < b` user comparators at 2^21, 2^22 and 2^24, two rounds.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d145.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_PASS_REGISTERS=64,80
warm() { TWOPHASE_BENCH_KIND=$1 TWOPHASE_PROFILE_LOG2N=$2 timeout 300 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$1_$2.log 2>&1; }
for k in u32 u32-top8 u32-user; do warm $k 21 & warm $k 22 & warm $k 24 & done
wait
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
for round in 1 2; do
  for k in u32 u32-top8 u32-user; do
    TWOPHASE_BENCH_SIZES=21,22,24 TWOPHASE_BENCH_KIND=$k timeout 120 .gpu/bench_gpu_mergesort > $OUT/p_${k}_$round.log 2>&1
    echo "$k round $round rc $?" >> $log
    grep -hE "^\| twophase \| [a-z0-9-]+ \||^pass registers|panicked" $OUT/p_${k}_$round.log >> $log
  done
done
cd $OUT && tar czf /tmp/d145.tgz . && mv /tmp/d145.tgz $OUT/all.tgz
cat $log
