# A/B of the segmented sort, base (f846a68: whole tiles through registers) and new (cp.async whole
# tiles) alternating, two rounds at 2^27: u64 rows (uniform 1..2000, 7/8 in one segment), u32
# uniform 1..2000, u32 pairs, the u32 7/8 long row; CUB's u64 and uniform2000 rows first.
source .gpu/env.sh; cd .gpu
nvcc -O3 -std=c++17 -arch=sm_90 cub_segmented_sort.cu -o cub_segmented_sort 2>&1 | tail -3
for row in u64 uniform2000; do
  TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_ROW=$row ./cub_segmented_sort $OUT/cub_$row.txt | tee -a $OUT/cub.log
done
cat $OUT/cub_u64.txt $OUT/cub_uniform2000.txt > $OUT/cub_segmented.txt
export TWOPHASE_CUB_SEGMENTED_RESULTS=$OUT/cub_segmented.txt
for r in 1 2; do
  for b in base new; do
    for row in u64 uniform2000 pairs; do
      TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_ROW=$row ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg|device:" | sed "s/^/$b $r: /" | tee -a $OUT/rows.log
    done
    TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_LONG=7/8 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "long" | sed "s/^/$b $r: /" | tee -a $OUT/rows.log
  done
done
