# Per-kernel times of one sort of the 7/8 row (ncu), new build, 2^27.
source .gpu/env.sh; cd .gpu
TWOPHASE_BENCH_LONG=7/8 TWOPHASE_BENCH_LOG2N=27 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:segsort -c 38 ./bench_new_gpu_segmented_sort > $OUT/ncu_long78.csv 2>&1
