# The batched own-partition search with the 32-lane search compiled apart (new, exp/segsort-own-batches 3296bea)
# against main (base, b7ff41b): 2^20 every row (three rounds, alternating, new first), the long
# rows at 2^24 and 2^25 and 2^24's rows (once); then tests and sanitizers.
source .gpu/env.sh
cd .gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/tests.log
for round in 1 2 3; do
  for b in new base; do
    TWOPHASE_BENCH_LOG2N=20 timeout 100 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg|^device" | sed "s/^/$b r$round: /" >> $OUT/ab.log
  done
done
for l in 24 25; do
  for b in new base; do
    [ $l = 24 ] && TWOPHASE_BENCH_LOG2N=$l timeout 100 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg|^device" | sed "s/^/$b r1: /" >> $OUT/ab.log
    TWOPHASE_BENCH_LOG2N=$l TWOPHASE_BENCH_LONG=1 timeout 60 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^long" | sed "s/^/$b r1: /" >> $OUT/ab.log
  done
done
(timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -3; timeout 60 ./test_gpu_graph --include-ignored 2>&1 | tail -2) >> $OUT/tests.log 2>&1
cd ..
timeout 260 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_gpu_segmented_sort > /dev/null 2>&1
cat $OUT/tests.log $OUT/sanitizer_summary.txt; grep -v device $OUT/ab.log | cut -d'|' -f1-7 | cut -c1-150
rm -f $OUT/sanitize_*.log; ls $OUT
