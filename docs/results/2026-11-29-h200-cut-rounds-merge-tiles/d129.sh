# H200: per kernel of the u32 and u32-pair sorts at 2^20 (Nsight Compute, per-SM counters), then
# the search budgets 768 and 1024 threads an SM (a warp a two-way boundary on more passes, whose
# tiles then search their own) beside the shipped 512, at 2^22-2^25.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d129.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1
for kind in u32 u32-pairs; do
  echo "== ncu $kind 2^20" >> $log
  TWOPHASE_BENCH_KIND=$kind TWOPHASE_PROFILE_LOG2N=20 timeout 60 ncu --clock-control none \
    --metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max --csv \
    .gpu/bench_new --profile > $OUT/ncu20_$kind.csv 2> $OUT/ncu20_$kind.err
  echo "ncu rc $?" >> $log
  python3 .gpu/ncu_mergesort.py $OUT/ncu20_$kind.csv >> $log 2>&1
done
export TWOPHASE_BENCH_SIZES=22,23,24,25 TWOPHASE_BENCH_SEARCH_BUDGETS=768,1024
for kind in u32 u64 u32-pairs u32-top8; do
  echo "== budgets $kind" >> $log
  TWOPHASE_BENCH_KIND=$kind timeout 120 .gpu/bench_new > $OUT/d129_$kind.log 2>&1
  echo "rc $?" >> $log
  grep -E "^\| twophase|search budget|panicked" $OUT/d129_$kind.log >> $log
done
cat $log
