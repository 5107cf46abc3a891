# H200, at f851bbd: small sorts of pairs with an 8-byte key or value at a shorter VT
# (TWOPHASE_BENCH_VTS=9,11,13) beside the shipped 15, u32 keys with u64 values and u64 keys with
# u32 and u64 values at 2^19, 2^20 and 2^21, two rounds; CUB's merge sorts of the same pairs built
# and run in the command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d157.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_VTS=9,11,13
kinds="u32+u64 u64+u32 u64+u64"
for k in $kinds; do for n in 19 20 21; do TWOPHASE_BENCH_KIND=$k TWOPHASE_PROFILE_LOG2N=$n timeout 200 .gpu/bench_fin --profile > $OUT/warm_${k//+/_}_$n.log 2>&1 & done; done
wait
for f in $OUT/warm_*.log; do grep -HE "panicked|error" $f | head -3 >> $log; done
echo "warm done $(date +%T)" >> $log
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
TWOPHASE_BENCH_SIZES=19,20,21 TWOPHASE_BENCH_KIND=u32+u64,u64+u32,u64+u64 timeout 100 /tmp/cub_mergesort $TWOPHASE_CUB_SORT_RESULTS > $OUT/cub.log 2>&1
echo "cub rc $?" >> $log
grep -E "cub-merge-[a-z0-9+]+ (19|20|21) " $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do for k in $kinds; do
  TWOPHASE_BENCH_SIZES=19,20,21 TWOPHASE_BENCH_KIND=$k timeout 100 .gpu/bench_fin > $OUT/bench_${k//+/_}_$round.log 2>&1
  echo "$k round $round rc $?" >> $log
  grep -hE "^\| twophase \| [a-z0-9+]+ \||^vt |panicked" $OUT/bench_${k//+/_}_$round.log >> $log
done; done
(cd $OUT && tar czf /tmp/all.tgz *.log *.txt && find . -type f ! -name d157.log -delete && mv /tmp/all.tgz .)
cat $log
