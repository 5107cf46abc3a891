# The merge levels' own partitions searched by a warp (32-ary): at 2^20 and 2^24 against PDL alone,
# full-size tests, sanitizers. Few files come back: everything goes to ab.log / tests.log / stdout.
source .gpu/env.sh
cd .gpu
for round in 1 2; do
  for l in 20 24; do
    [ $round = 2 ] && [ $l = 24 ] && rows=u64 || rows=
    for chain in pdl own; do
      if [ $chain = own ]; then export TWOPHASE_BENCH_OWN_BELOW=1073741824; else unset TWOPHASE_BENCH_OWN_BELOW; fi
      TWOPHASE_BENCH_ROW=$rows TWOPHASE_BENCH_CHAIN=$chain TWOPHASE_BENCH_LOG2N=$l timeout 100 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^\| seg|^device" | sed "s/^/$chain r$round: /" >> $OUT/ab.log
    done
  done
done
unset TWOPHASE_BENCH_OWN_BELOW
(timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -4; timeout 120 ./test_adversarial --include-ignored segmented 2>&1 | tail -3) > $OUT/tests.log 2>&1
cd ..
timeout 280 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_gpu_segmented_sort > /dev/null 2>&1
cat $OUT/tests.log $OUT/sanitizer_summary.txt; grep -E "^(pdl|own) r.: \| seg" $OUT/ab.log | cut -c1-120
rm -f $OUT/sanitize_*.log; ls $OUT
