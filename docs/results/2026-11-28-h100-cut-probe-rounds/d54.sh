# H100: four-way cut fine stage by probe rounds on the cut's lanes. u32 base (6df6fa7) vs new alternating, shipped tunings, CUB merge sort and radix sort in the same command; then per-kernel time (ncu) of the new build at 2^24.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d54.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32 timeout 330 bash .gpu/run.sh bench_base_gpu_mergesort bench_gpu_mergesort bench_base_gpu_mergesort bench_gpu_mergesort > $OUT/d54_run.log 2>&1
echo "run.sh rc $?" >> $log
grep -E "^== |^\| twophase|^\| cub|copy rate|^device|panicked|CUB" $OUT/d54_run.log >> $log
mkdir -p /tmp/keep && cp $OUT/cub_mergesort.txt /tmp/keep/ 2>/dev/null
for kind in u32 u64 u32-pairs; do
  echo "== ncu $kind 2^24" >> $log
  TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=24 timeout 100 \
    ncu --clock-control none --metrics gpu__time_duration.sum --csv .gpu/bench_gpu_mergesort --profile > $OUT/ncu_${kind}_24.csv 2> $OUT/ncu_${kind}_24.err
  python3 .gpu/ncu_mergesort.py $OUT/ncu_${kind}_24.csv >> $log 2>&1
done
cat $log
