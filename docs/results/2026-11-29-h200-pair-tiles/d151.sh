# H200: the pair types' four-way tiles under a threads-only launch bound (bench_new, quad_registers
# 0 as shipped) against the bound of one block an SM they had (bench_old), with register bounds of
# the two-way (64, 80) and four-way (64, 80, 96) tiles beside them; u32 keys with u32 and u64
# values, u64 keys with u32 and u64 values at 2^20, 2^24 and 2^27, CUB's merge and radix sorts of
# the same pairs built and run in the command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d151.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1
kinds="u32-pairs u32+u64 u64+u32 u64+u64"
variants() { TWOPHASE_BENCH_PASS_REGISTERS=64,80 TWOPHASE_BENCH_QUAD_REGISTERS=64,80,96 "$@"; }
warm() { TWOPHASE_BENCH_KIND=$2 TWOPHASE_PROFILE_LOG2N=$3 timeout 240 $1 --profile > $OUT/warm_$(basename $1)_$2_$3.log 2>&1; }
for k in $kinds; do for n in 20 24 27; do variants warm .gpu/bench_new $k $n & warm .gpu/bench_old $k $n & done; done
wait
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
echo "warm done $(date +%T)" >> $log
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=u32-pairs,u32+u64,u64+u32,u64+u64 timeout 150 /tmp/cub_mergesort $TWOPHASE_CUB_SORT_RESULTS > $OUT/cub.log 2>&1
echo "cub rc $?" >> $log
grep -E " (20|24|27) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for k in $kinds; do
  TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=$k timeout 100 .gpu/bench_old > $OUT/old_$k.log 2>&1
  echo "old $k rc $?" >> $log
  grep -hE "^\| twophase \| [a-z0-9+-]+ \||panicked" $OUT/old_$k.log | sed 's/^/old /' >> $log
  TWOPHASE_BENCH_SIZES=20,24,27 TWOPHASE_BENCH_KIND=$k variants timeout 150 .gpu/bench_new > $OUT/new_$k.log 2>&1
  echo "new $k rc $?" >> $log
  grep -hE "^device|^\| twophase \| [a-z0-9+-]+ \||^pass registers|^quad registers|panicked" $OUT/new_$k.log >> $log
done
cat $log
