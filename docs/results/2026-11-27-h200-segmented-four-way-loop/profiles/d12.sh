# Why a four-way merge level moves keys at half the copy rate: the 7/8 row's four-way and two-way
# merge kernels with grids striding a wave (shipped) against a block a tile (TP_EXP_FULL),
# per-kernel times, then Nsight Compute's full set on one launch of each kernel.
source .gpu/env.sh; cd .gpu
N="ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:segsort -c 38"
for v in none f m fm; do
  TP_EXP_FULL=$v TWOPHASE_BENCH_LONG=7/8 TWOPHASE_BENCH_LOG2N=27 timeout 60 $N ./bench_exp_gpu_segmented_sort > $OUT/ncu_long78_full_$v.csv 2>&1
  TP_EXP_FULL=$v TWOPHASE_BENCH_ROW=uniform2000 TWOPHASE_BENCH_LOG2N=27 timeout 60 $N ./bench_exp_gpu_segmented_sort > $OUT/ncu_uniform_full_$v.csv 2>&1
done
for v in none fm; do
  TP_EXP_FULL=$v TWOPHASE_BENCH_LONG=7/8 TWOPHASE_BENCH_LOG2N=27 timeout 80 ./bench_exp_gpu_segmented_sort 2>&1 | grep -E "^long|plain" | sed "s/^/full=$v: /" | tee -a $OUT/long_full.log
done
F="ncu --clock-control none --set full"
TWOPHASE_BENCH_LONG=7/8 TWOPHASE_BENCH_LOG2N=27 timeout 90 $F -k regex:four_way_merge --launch-skip 1 -c 1 ./bench_exp_gpu_segmented_sort > $OUT/ncu_full_four_way.txt 2>&1
TWOPHASE_BENCH_LONG=7/8 TWOPHASE_BENCH_LOG2N=27 timeout 90 $F -k regex:segsort_merge --launch-skip 14 -c 1 ./bench_exp_gpu_segmented_sort > $OUT/ncu_full_two_way.txt 2>&1
TWOPHASE_BENCH_LONG=7/8 TWOPHASE_BENCH_LOG2N=27 timeout 90 $F -k regex:mergesort_quad_tile --launch-skip 1 -c 1 ./bench_exp_gpu_segmented_sort > $OUT/ncu_full_plain_quad.txt 2>&1
TWOPHASE_BENCH_LONG=7/8 TWOPHASE_BENCH_LOG2N=27 timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:mergesort -c 20 ./bench_exp_gpu_segmented_sort > $OUT/ncu_plain.csv 2>&1
tail -2 $OUT/ncu_full_*.txt
