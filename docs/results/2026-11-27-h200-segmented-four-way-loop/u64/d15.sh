# Shipped four-way levels for u64 keys too: full-size segmented tests, memcheck, per-kernel times
# of the 7/8 row (u32), and the u64 rows against d7e6cd2 (bench_base), two rounds.
source .gpu/env.sh
(cd .gpu && timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -4 | tee $OUT/test_full.log)
cd .gpu
TWOPHASE_BENCH_LONG=7/8 TWOPHASE_BENCH_LOG2N=27 timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum --csv -k regex:segsort -c 38 ./bench_new_gpu_segmented_sort > $OUT/ncu_long78.csv 2>&1
for round in 1 2; do
  for b in base new; do
    TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_ROW=u64 timeout 40 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/$b r$round: /" | tee -a $OUT/u64_rows.log
  done
done
cd ..
timeout 220 bash .gpu/run.sh sanitize memcheck test_gpu_segmented_sort 2>&1 | tail -2
cat $OUT/sanitizer_summary.txt
