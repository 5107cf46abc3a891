# H100 per-kernel times (Nsight Compute, clocks unlocked) of the shipped u32, top-8 comparator and pairs sorts at 2^20 and 2^24 (HEAD a595b89).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d70.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1
for kind in u32 u32-top8 u32-pairs; do
  for n in 20 24; do
    echo "== $kind 2^$n" >> $log
    TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=$n timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --csv .gpu/bench_gpu_mergesort --profile > /tmp/p.csv 2>/tmp/p.err
    grep -E "profiled" /tmp/p.csv /tmp/p.err | head -3 >> $log
    python3 .gpu/ncu_mergesort.py /tmp/p.csv >> $log 2>&1
  done
done
cat $log
