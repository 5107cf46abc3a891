# A/B of the segmented sort: base and new builds alternating, long rows at 2^27 then the 2^27 table.
source .gpu/env.sh; cd .gpu
for r in 1 2; do
  for b in base new; do
    TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_LONG=1 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "device|long" | sed "s/^/$b $r: /" | tee -a $OUT/long.log
  done
done
for b in base new; do
  TWOPHASE_BENCH_LOG2N=27 ./bench_${b}_gpu_segmented_sort 2>&1 | sed "s/^/$b: /" | tee -a $OUT/table27.log
done
