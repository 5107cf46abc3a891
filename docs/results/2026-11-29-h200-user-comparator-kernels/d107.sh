# H200: per-kernel time (Nsight Compute) of the shipped sorts at 2^24: u32 under Less, u32 under `a < b` as a user comparator (checked kernels, equivalents identical), u32 under the top-8-bit user comparator (checked, equivalents differ); HEAD's bench_gpu_mergesort.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d107.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
for kn in u32:24 u32-user:24 u32-top8:24 u32-top8:27 u32:27; do
  kind=${kn%%:*}; n=${kn##*:}
  echo "== $kind 2^$n" >> $log
  TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=$n timeout 100 \
    ncu --clock-control none --metrics gpu__time_duration.sum --csv .gpu/bench_gpu_mergesort --profile > $OUT/ncu_${kind}_$n.csv 2> $OUT/ncu_${kind}_$n.err
  echo "ncu rc $?" >> $log
  grep profiled $OUT/ncu_${kind}_$n.csv >> $log
  python3 .gpu/ncu_mergesort.py $OUT/ncu_${kind}_$n.csv >> $log 2>&1
done
cat $log
