# H100: base (2700449^, 256-thread four-way tiles) and new (128 from 2^25 keys) alternating twice, u32 and the top-8 comparator at 2^27, with CUB's merge and radix sorts built and run in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d65.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=27
TWOPHASE_BENCH_KIND=u32 timeout 300 bash .gpu/run.sh bench_base_gpu_mergesort bench_gpu_mergesort bench_base_gpu_mergesort bench_gpu_mergesort > $OUT/d65_u32.log 2>&1
echo "run.sh u32 rc $?" >> $log
grep -E "^== |^\| twophase|^\| cub|copy rate|panicked" $OUT/d65_u32.log >> $log
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
grep -E "top8|u32 " $TWOPHASE_CUB_SORT_RESULTS | head -20 >> $log
for b in bench_base_gpu_mergesort bench_gpu_mergesort bench_base_gpu_mergesort bench_gpu_mergesort; do
  echo "== $b u32-top8" >> $log
  TWOPHASE_BENCH_KIND=u32-top8 timeout 60 .gpu/$b > $OUT/d65_top8_$b.log 2>&1
  grep -E "^\| twophase|copy rate|panicked" $OUT/d65_top8_$b.log >> $log
done
cat $log
