# H100: per-kernel time (Nsight Compute) of the shipped sorts at 2^20 and 2^24: u32, u32 pairs, u32 top-8 comparator.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d52.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for kind in u32 u32-pairs u32-top8 u64; do
  for n in 20 24; do
    echo "== $kind 2^$n" >> $log
    TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=$n timeout 200 \
      ncu --clock-control none --metrics gpu__time_duration.sum --csv .gpu/bench_gpu_mergesort --profile > $OUT/ncu_${kind}_$n.csv 2> $OUT/ncu_${kind}_$n.err
    echo "ncu rc $?" >> $log
    grep profiled $OUT/ncu_${kind}_$n.csv >> $log
    python3 .gpu/ncu_mergesort.py $OUT/ncu_${kind}_$n.csv >> $log 2>&1
  done
done
cat $log
