# H200: shorter block-sort VTs for u32 pairs (7, 9) and u64 keys (15-21) at 2^18-2^22 beside the
# shipped ones, CUB's merge sort in the same command; then per kernel (Nsight Compute) of the
# `a < b` user comparator's sort at 2^21, shipped (VT 21) against VT 23.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d134.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_PROFILE_LOG2N=20
TWOPHASE_BENCH_KIND=u32-pairs TWOPHASE_BENCH_VTS=7,9 timeout 250 .gpu/bench_gpu_mergesort --profile > $OUT/warm_pairs.log 2>&1 &
TWOPHASE_BENCH_KIND=u64 TWOPHASE_BENCH_VTS=15,17,19,21 timeout 250 .gpu/bench_gpu_mergesort --profile > $OUT/warm_u64.log 2>&1 &
TWOPHASE_BENCH_KIND=u32-user TWOPHASE_BENCH_VTS=23 timeout 250 .gpu/bench_gpu_mergesort --profile > $OUT/warm_user.log 2>&1 &
wait
for f in $OUT/warm_*.log; do echo "-- $(basename $f)" >> $log; grep -E "panicked|error" $f | head -3 >> $log; done
export TWOPHASE_BENCH_SIZES=18,19,20,21,22
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in u32-pairs u64; do
  TWOPHASE_BENCH_KIND=$kind timeout 60 /tmp/cub_mergesort $OUT/cub_$kind.txt > /dev/null 2>&1
done
cat $OUT/cub_u32-pairs.txt $OUT/cub_u64.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E "merge" $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do
  echo "== round $round" >> $log
  TWOPHASE_BENCH_KIND=u32-pairs TWOPHASE_BENCH_VTS=7,9 timeout 60 .gpu/bench_gpu_mergesort > $OUT/d134_pairs_$round.log 2>&1
  echo "pairs rc $?" >> $log
  TWOPHASE_BENCH_KIND=u64 TWOPHASE_BENCH_VTS=15,17,19,21 timeout 60 .gpu/bench_gpu_mergesort > $OUT/d134_u64_$round.log 2>&1
  echo "u64 rc $?" >> $log
  grep -hE "^\| twophase|^vt |panicked" $OUT/d134_pairs_$round.log $OUT/d134_u64_$round.log >> $log
done
echo "== ncu u32-user 2^21 (shipped, then VT 23)" >> $log
TWOPHASE_BENCH_KIND=u32-user TWOPHASE_PROFILE_LOG2N=21 TWOPHASE_BENCH_VTS=23 timeout 120 ncu --clock-control none \
  --metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max --csv \
  .gpu/bench_gpu_mergesort --profile > $OUT/ncu21_user.csv 2> $OUT/ncu21_user.err
echo "ncu rc $?" >> $log
python3 .gpu/ncu_mergesort.py $OUT/ncu21_user.csv >> $log 2>&1
grep -E "^profiled" $OUT/ncu21_user.csv >> $log
cd $OUT && tar czf /tmp/d134.tgz . && mv /tmp/d134.tgz $OUT/all.tgz
cat $log
