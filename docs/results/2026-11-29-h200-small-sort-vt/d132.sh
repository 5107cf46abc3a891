# H200: small sorts. The block sort's VT beside the shipped 23 (u32, top-8) and 11 (pairs) at
# 2^19-2^22, with CUB's merge sort at the same sizes; Nsight Compute's sections of one u32 sort at
# 2^20 (block sort and its seven tile launches); the merge tests of HEAD.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d132.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > $OUT/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
timeout 280 .gpu/test_gpu_merge --include-ignored > $OUT/d132_test_gpu_merge.log 2>&1 &
# Compile every variant into the disk cache, all kinds at once (profile mode sorts each twice).
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_PROFILE_LOG2N=20
TWOPHASE_BENCH_KIND=u32 TWOPHASE_BENCH_VTS=13,15,17,19,21 timeout 250 .gpu/bench_gpu_mergesort --profile > $OUT/warm_u32.log 2>&1 &
TWOPHASE_BENCH_KIND=u32-top8 TWOPHASE_BENCH_VTS=15,17,19,21 timeout 250 .gpu/bench_gpu_mergesort --profile > $OUT/warm_top8.log 2>&1 &
TWOPHASE_BENCH_KIND=u32-pairs TWOPHASE_BENCH_VTS=13,15,17 TWOPHASE_BENCH_BLOCK_THREADS=1024 timeout 250 .gpu/bench_gpu_mergesort --profile > $OUT/warm_pairs.log 2>&1 &
wait
for f in $OUT/d132_test_*.log $OUT/warm_*.log; do echo "-- $(basename $f)" >> $log; grep -E "^test result|panicked|error" $f | head -5 >> $log; done
echo "== ncu u32 2^20" >> $log
TWOPHASE_BENCH_KIND=u32 timeout 150 ncu --clock-control none \
  --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section SourceCounters --section MemoryWorkloadAnalysis \
  -k regex:"twophase_(blocksort|mergesort_tile)" --launch-skip 24 --launch-count 8 --kill yes \
  -o $OUT/u32_20 .gpu/bench_gpu_mergesort --profile > $OUT/ncu_u32_20.out 2>&1
echo "ncu rc $?" >> $log
ncu --import $OUT/u32_20.ncu-rep --page details > $OUT/u32_20_details.txt 2>&1
ncu --import $OUT/u32_20.ncu-rep --page source --csv --print-source sass > $OUT/u32_20_sass.csv 2>&1
grep -E "twophase_|Duration|Warp Cycles Per Issued|Issued Warp Per Scheduler|Achieved Occupancy|Theoretical Occ|Registers Per|Grid Size|Block Size|Memory Throughput|Compute \(SM\)|Eligible" $OUT/u32_20_details.txt | head -120 >> $log
unset TWOPHASE_PROFILE_LOG2N
export TWOPHASE_BENCH_SIZES=19,20,21,22
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in u32 u32-pairs u32-top8; do
  TWOPHASE_BENCH_KIND=$kind timeout 60 /tmp/cub_mergesort $OUT/cub_$kind.txt > /dev/null 2>&1
done
cat $OUT/cub_u32.txt $OUT/cub_u32-pairs.txt $OUT/cub_u32-top8.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
grep -E "merge" $TWOPHASE_CUB_SORT_RESULTS >> $log
for round in 1 2; do
  echo "== round $round" >> $log
  TWOPHASE_BENCH_KIND=u32 TWOPHASE_BENCH_VTS=13,15,17,19,21 timeout 100 .gpu/bench_gpu_mergesort > $OUT/d132_u32_$round.log 2>&1
  echo "u32 rc $?" >> $log
  TWOPHASE_BENCH_KIND=u32-top8 TWOPHASE_BENCH_VTS=15,17,19,21 timeout 100 .gpu/bench_gpu_mergesort > $OUT/d132_top8_$round.log 2>&1
  echo "top8 rc $?" >> $log
  TWOPHASE_BENCH_KIND=u32-pairs TWOPHASE_BENCH_VTS=13,15,17 TWOPHASE_BENCH_BLOCK_THREADS=1024 timeout 100 .gpu/bench_gpu_mergesort > $OUT/d132_pairs_$round.log 2>&1
  echo "pairs rc $?" >> $log
  grep -hE "^\| twophase|^vt |^block threads|panicked|copy rate" $OUT/d132_u32_$round.log $OUT/d132_top8_$round.log $OUT/d132_pairs_$round.log >> $log
done
cat $log
