# A merge block's own partitions searched a batch of tiles at once (new) against one tile at a
# time (base, cbacad9), alternating, at 2^20, 2^24 and 2^25; then tests, sanitizers.
source .gpu/env.sh
cd .gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/tests.log
(timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -3; timeout 60 ./test_gpu_graph --include-ignored 2>&1 | tail -2) >> $OUT/tests.log 2>&1
# Round 1: every row at 2^20, 2^24, 2^25 and the long rows; round 2: 2^20's rows and the long rows.
for round in 1 2; do
  for l in 20 24 25; do
    for b in base new; do
      [ $round = 1 ] || [ $l = 20 ] && TWOPHASE_BENCH_LOG2N=$l timeout 100 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg|^device" | sed "s/^/$b r$round: /" >> $OUT/ab.log
      [ $l = 20 ] || TWOPHASE_BENCH_LOG2N=$l TWOPHASE_BENCH_LONG=1 timeout 60 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^long" | sed "s/^/$b r$round: /" >> $OUT/ab.log
    done
  done
done
cd ..
timeout 200 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_gpu_segmented_sort > /dev/null 2>&1
cat $OUT/tests.log $OUT/sanitizer_summary.txt; grep -v device $OUT/ab.log | cut -c1-140
rm -f $OUT/sanitize_*.log; ls $OUT
