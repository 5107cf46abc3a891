# HEAD check: full-size segmented tests, per-kernel profiles (7/8 row, power law with and without
# four-way levels), then memcheck, racecheck and synccheck on the segmented tests.
source .gpu/env.sh
(cd .gpu && timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -4 | tee $OUT/test_full.log)
cd .gpu
N="ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:segsort -c 70"
TWOPHASE_BENCH_LONG=7/8 TWOPHASE_BENCH_LOG2N=27 timeout 90 $N ./bench_new_gpu_segmented_sort > $OUT/ncu_long78.csv 2>&1
TWOPHASE_BENCH_ROW=powerlaw TWOPHASE_BENCH_LOG2N=27 timeout 60 $N ./bench_new_gpu_segmented_sort > $OUT/ncu_powerlaw.csv 2>&1
TWOPHASE_BENCH_FOUR_WAY_FROM=none TWOPHASE_BENCH_ROW=powerlaw TWOPHASE_BENCH_LOG2N=27 timeout 60 $N ./bench_new_gpu_segmented_sort > $OUT/ncu_powerlaw_two_way.csv 2>&1
cd ..
timeout 280 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_gpu_segmented_sort 2>&1 | tail -5
cat $OUT/sanitizer_summary.txt
