# H200: the sorts with the partial tile first. Per kernel (Nsight Compute) of the u32 sort at 2^24;
# then the top-8-bit user comparator, f32 and f64 at 2^20, 2^24 and 2^27 beside CUB's merge sort of
# the same keys under the same functors, in this command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d123.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > /tmp/cub_build.log 2>&1 || echo "nvcc failed" >> $log) &
export TWOPHASE_BENCH_SHIPPED_ONLY=1
echo "== ncu u32 2^24" >> $log
TWOPHASE_BENCH_KIND=u32 TWOPHASE_PROFILE_LOG2N=24 timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
  .gpu/bench_new --profile > $OUT/ncu_u32.csv 2> $OUT/ncu_u32.err
echo "ncu rc $?" >> $log
python3 .gpu/ncu_mergesort.py $OUT/ncu_u32.csv >> $log 2>&1
wait
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
for kind in u32-top8 f32 f64; do
  TWOPHASE_BENCH_KIND=$kind timeout 40 /tmp/cub_mergesort $OUT/cub_$kind.txt >> $log 2>&1
done
cat $OUT/cub_u32-top8.txt $OUT/cub_f32.txt $OUT/cub_f64.txt > $TWOPHASE_CUB_SORT_RESULTS 2>/dev/null
export TWOPHASE_BENCH_SIZES=20,24,27
for kind in u32-top8 f32 f64; do
  echo "== bench_new $kind" >> $log
  TWOPHASE_BENCH_KIND=$kind timeout 40 .gpu/bench_new > $OUT/d123_b.log 2>&1
  grep -E "^\| twophase|panicked|copy rate" $OUT/d123_b.log >> $log
done
cat $log
