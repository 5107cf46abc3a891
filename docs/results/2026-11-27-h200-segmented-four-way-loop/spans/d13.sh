# Four-way tiles spanning 1, 2 or 4 level tiles: full-size segmented tests, the sweep of the
# four-way tile's threads (u32 long rows and power law at 2^27), per-kernel times, sanitizers.
source .gpu/env.sh
(cd .gpu && timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -4 | tee $OUT/test_full.log)
cd .gpu
for t in 128 256 512; do
  TWOPHASE_BENCH_FOUR_WAY_THREADS=$t TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_LONG=1 timeout 80 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^long|plain" | sed "s/^/threads $t: /" | tee -a $OUT/sweep_long.log
  TWOPHASE_BENCH_FOUR_WAY_THREADS=$t TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_ROW=powerlaw timeout 40 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/threads $t: /" | tee -a $OUT/sweep_powerlaw.log
done
N="ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:segsort -c 38"
for t in 256 512; do
  TWOPHASE_BENCH_FOUR_WAY_THREADS=$t TWOPHASE_BENCH_LONG=7/8 TWOPHASE_BENCH_LOG2N=27 timeout 60 $N ./bench_new_gpu_segmented_sort > $OUT/ncu_long78_$t.csv 2>&1
done
cd ..
timeout 200 bash .gpu/run.sh sanitize racecheck synccheck test_gpu_segmented_sort 2>&1 | tail -3
cat $OUT/sanitizer_summary.txt
