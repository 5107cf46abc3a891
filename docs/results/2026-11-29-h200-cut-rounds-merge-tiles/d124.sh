# H200: u32 sorts behind a 512 x 45 block sort (two blocks an SM) beside the shipped ones, and the
# merge's u32 shapes at 2^24-2^27, each with CUB in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d124.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
(nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_mergesort.cu -o /tmp/cub_mergesort > /tmp/cub_build.log 2>&1 || echo "nvcc sort failed" >> $log
 nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_merge.cu -o /tmp/cub_merge > /tmp/cub_build2.log 2>&1 || echo "nvcc merge failed" >> $log) &
echo "== sort 512 x 45" >> $log
TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32 TWOPHASE_BENCH_SIZES=20,22,23,24,25,27 TWOPHASE_BENCH_BLOCK_THREADS=512 TWOPHASE_BENCH_VTS=45 \
  timeout 230 .gpu/bench_gpu_mergesort > $OUT/d124_sort.log 2>&1
echo "sort rc $?" >> $log
wait
echo "== CUB" >> $log
TWOPHASE_BENCH_KIND=u32 timeout 40 /tmp/cub_mergesort $OUT/cub_sort.txt >> $log 2>&1
timeout 60 /tmp/cub_merge $OUT/cub_merge.txt >> $log 2>&1
echo "== merge shapes" >> $log
TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt TWOPHASE_BENCH_SIZES=24,25,26,27 timeout 200 .gpu/bench_gpu_merge > $OUT/d124_merge.log 2>&1
echo "merge rc $?" >> $log
grep -E "^\| twophase|block threads|^vt|panicked|copy rate" $OUT/d124_sort.log >> $log
grep -E "^\| twophase|^sweep|panicked|copy rate" $OUT/d124_merge.log >> $log
cat $log
