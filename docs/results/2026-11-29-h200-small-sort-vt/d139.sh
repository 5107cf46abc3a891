# H200: pass tiles of 64, 128 and 256 threads at VT 21 for the checked small sorts (the top-8-bit
# and `a < b` user comparators) at 2^20 and 2^21, beside the shipped tuning (128 threads): a
# benchmark built with USER_SWEEP set to those three shapes (not committed).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d139.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SIZES=20,21 TWOPHASE_PROFILE_LOG2N=20
for kind in u32-top8 u32-user; do
  TWOPHASE_BENCH_KIND=$kind timeout 150 .gpu/bench_sweep --profile > $OUT/warm_$kind.log 2>&1 &
done
wait
for round in 1 2; do
  echo "== round $round" >> $log
  for kind in u32-top8 u32-user; do
    TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/bench_sweep > $OUT/d139_${kind}_$round.log 2>&1
    echo "$kind rc $?" >> $log
    grep -E "^\| twophase|^sweep|panicked" $OUT/d139_${kind}_$round.log >> $log
  done
done
cat $log
