# H200: per-kernel time (Nsight Compute) of shipped sorts (u32 / pairs at 2^20, top-8 and u32 at 2^24), then merge and search benches with CUB.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d80.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for kn in u32:20 u32-pairs:20 u32-top8:20 u32-top8:24 u32:24; do
  kind=${kn%%:*}; n=${kn##*:}
  echo "== $kind 2^$n" >> $log
  TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=$n timeout 100 \
    ncu --clock-control none --metrics gpu__time_duration.sum --csv .gpu/bench_gpu_mergesort --profile > $OUT/ncu_${kind}_$n.csv 2> $OUT/ncu_${kind}_$n.err
  echo "ncu rc $?" >> $log
  grep profiled $OUT/ncu_${kind}_$n.csv >> $log
  python3 .gpu/ncu_mergesort.py $OUT/ncu_${kind}_$n.csv >> $log 2>&1
done
TWOPHASE_BENCH_SHIPPED_ONLY=1 timeout 300 bash .gpu/run.sh bench_gpu_merge bench_gpu_search > $OUT/d80_bench.log 2>&1
echo "bench rc $?" >> $log
grep -E "^\||summary|copy rate" $OUT/d80_bench.log >> $log
cat $log
