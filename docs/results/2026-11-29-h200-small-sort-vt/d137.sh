# H200: per kernel (Nsight Compute) of the sorts at 2^20 at VT 21: u32 under `Less` (trusted,
# TWOPHASE_BENCH_VTS=21), under `a < b` as a user comparator (checked) and under the top-8-bit
# comparator (checked, stable slot sort), to see where the checked small sorts' time goes.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d137.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_PROFILE_LOG2N=20
for kind in u32 u32-user u32-top8; do
  vts=""; [ $kind = u32 ] && vts=21
  TWOPHASE_BENCH_KIND=$kind TWOPHASE_BENCH_VTS=$vts timeout 150 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$kind.log 2>&1 &
done
wait
for kind in u32 u32-user u32-top8; do
  vts=""; [ $kind = u32 ] && vts=21
  echo "== ncu $kind 2^20" >> $log
  TWOPHASE_BENCH_KIND=$kind TWOPHASE_BENCH_VTS=$vts timeout 100 ncu --clock-control none \
    --metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,smsp__inst_executed.sum --csv \
    .gpu/bench_gpu_mergesort --profile > $OUT/ncu20_$kind.csv 2> $OUT/ncu20_$kind.err
  echo "ncu rc $?" >> $log
  python3 .gpu/ncu_mergesort.py $OUT/ncu20_$kind.csv >> $log 2>&1
  grep -E "^profiled" $OUT/ncu20_$kind.csv >> $log
done
cd $OUT && tar czf /tmp/d137.tgz . && mv /tmp/d137.tgz $OUT/all.tgz
cat $log
