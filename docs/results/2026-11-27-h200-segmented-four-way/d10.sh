# The first four-way level of the u32 tuning swept (none, 0, 4, 8, 12) at 2^27: the long rows
# (7/8, 1/2, 1/8 of the keys in one segment among uniform 1..2000, the uniform row alone, the
# plain mergesort) and the power-law row; then the segmented tests under compute-sanitizer.
source .gpu/env.sh
for from in none 0 4 8 12; do
  (cd .gpu && TWOPHASE_BENCH_FOUR_WAY_FROM=$from TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_LONG=1 timeout 80 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^long" | sed "s/^/from $from: /" | tee -a $OUT/long.log
   TWOPHASE_BENCH_FOUR_WAY_FROM=$from TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_ROW=powerlaw timeout 40 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/from $from: /" | tee -a $OUT/rows.log)
done
timeout 330 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_gpu_segmented_sort 2>&1 | tail -3
cat $OUT/sanitizer_summary.txt
