# H100: the four-way cut's probe rounds on a warp (8 probes a run, ballots), u32 base (6df6fa7) vs new alternating with CUB merge/radix sort in the same command; ncu per-kernel time at 2^24; then u64 and u32 pairs base vs new with the cut budget 2048 variant (a warp a cut at 2^24).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d56.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32 timeout 250 bash .gpu/run.sh bench_base_gpu_mergesort bench_gpu_mergesort bench_base_gpu_mergesort bench_gpu_mergesort > $OUT/d56_run.log 2>&1
echo "run.sh rc $?" >> $log
grep -E "^== |^\| twophase|^\| cub|copy rate|^device|panicked|CUB" $OUT/d56_run.log >> $log
echo "== ncu u32 2^24" >> $log
TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=u32 TWOPHASE_PROFILE_LOG2N=24 timeout 60 \
  ncu --clock-control none --metrics gpu__time_duration.sum --csv .gpu/bench_gpu_mergesort --profile > $OUT/ncu_u32_24.csv 2> $OUT/ncu_u32_24.err
python3 .gpu/ncu_mergesort.py $OUT/ncu_u32_24.csv >> $log 2>&1
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt TWOPHASE_BENCH_SHIPPED_ONLY=1
for kind in u64 u32-pairs; do
  for b in bench_base_gpu_mergesort bench_gpu_mergesort bench_base_gpu_mergesort bench_gpu_mergesort; do
    echo "== $b $kind" >> $log
    TWOPHASE_BENCH_CUT_BUDGETS=2048 TWOPHASE_BENCH_KIND=$kind timeout 70 .gpu/$b > $OUT/d56_${b}_$kind.log 2>&1
    grep -E "^\| twophase|copy rate|panicked|cut budget" $OUT/d56_${b}_$kind.log >> $log
  done
done
cat $log
