# H200: narrow merge tiles for u64 keys and u32 pairs at 2^24-2^27, and 128-thread sorted-search
# tiles beside the shipped one, CUB's DeviceMerge in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d128.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_merge.cu -o /tmp/cub_merge > /tmp/cub_build2.log 2>&1 || echo "nvcc merge failed" >> $log
timeout 60 /tmp/cub_merge $OUT/cub_merge.txt | grep -E "u64 |pairs " >> $log 2>&1
for kind in u64 u32-pairs; do
  TWOPHASE_BENCH_KIND=$kind TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt TWOPHASE_BENCH_SIZES=24,25,26,27 timeout 150 .gpu/bench_gpu_merge > $OUT/d128_merge_$kind.log 2>&1
  echo "merge $kind rc $?" >> $log
  grep -E "^\| twophase|^sweep|panicked|copy rate" $OUT/d128_merge_$kind.log >> $log
done
TWOPHASE_BENCH_KIND=sorted-search timeout 200 .gpu/bench_gpu_search > $OUT/d128_search.log 2>&1
echo "search rc $?" >> $log
grep -E "sorted search|summary|panicked|copy rate" $OUT/d128_search.log >> $log
cat $log
