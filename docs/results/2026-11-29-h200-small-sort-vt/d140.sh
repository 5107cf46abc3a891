# H200: per kernel (Nsight Compute) of the f32 and u32 sorts at 2^20 (both at VT 17; f32 through
# its integer images), to see where f32's few percent go.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d140.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_PROFILE_LOG2N=20
for kind in u32 f32; do
  TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/bench_gpu_mergesort --profile > $OUT/warm_$kind.log 2>&1 &
done
wait
for kind in u32 f32; do
  echo "== ncu $kind 2^20" >> $log
  TWOPHASE_BENCH_KIND=$kind timeout 100 ncu --clock-control none \
    --metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,smsp__inst_executed.sum --csv \
    .gpu/bench_gpu_mergesort --profile > $OUT/ncu20_$kind.csv 2> $OUT/ncu20_$kind.err
  echo "ncu rc $?" >> $log
  python3 .gpu/ncu_mergesort.py $OUT/ncu20_$kind.csv >> $log 2>&1
done
cat $log
