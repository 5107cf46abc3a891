# The merge levels' own partitions searched by a warp (32-ary) against PDL alone: every row at
# 2^20 (two rounds) and 2^24, and the u32 long rows at 2^24.
source .gpu/env.sh
cd .gpu
for round in 1 2; do
  for chain in pdl own; do
    if [ $chain = own ]; then export TWOPHASE_BENCH_OWN_BELOW=1073741824; else unset TWOPHASE_BENCH_OWN_BELOW; fi
    TWOPHASE_BENCH_CHAIN=$chain TWOPHASE_BENCH_LOG2N=20 timeout 60 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^\| seg|^device" | sed "s/^/$chain r$round: /" >> $OUT/ab.log
    [ $round = 1 ] || continue
    TWOPHASE_BENCH_CHAIN=$chain TWOPHASE_BENCH_LOG2N=24 timeout 90 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^\| seg|^device" | sed "s/^/$chain r$round: /" >> $OUT/ab.log
    TWOPHASE_BENCH_CHAIN=$chain TWOPHASE_BENCH_LONG=1 TWOPHASE_BENCH_LOG2N=24 timeout 60 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^long" | sed "s/^/$chain r$round: /" >> $OUT/ab.log
  done
done
cut -c1-170 $OUT/ab.log | grep -v device
