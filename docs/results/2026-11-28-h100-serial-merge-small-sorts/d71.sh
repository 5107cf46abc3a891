# H100: u32 and u32-pair sorts at 2^20 with the small-sort sweep (block sorts of fewer keys a thread, two-way passes), three runs each, CUB 3.0.1 built and run in the same command.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d71.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SIZES=20
for kind in u32 u32-pairs; do
  TWOPHASE_BENCH_KIND=$kind timeout 280 bash .gpu/run.sh bench_gpu_mergesort bench_gpu_mergesort bench_gpu_mergesort > $OUT/d71_$kind.log 2>&1
  echo "run.sh $kind rc $?" >> $log
  grep -E "^== |^\| twophase|^\| cub|copy rate|sweep|panicked|correct: false" $OUT/d71_$kind.log >> $log
done
grep -E " 20 " $OUT/cub_mergesort.txt | head -20 >> $log
cat $log
