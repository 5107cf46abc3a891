# HEAD's GPU checks (tests at full size, sanitizers), then at 2^25: the long rows and the u64 rows
# with the merge levels' own partitions (shipped) against the partition launches (PDL alone).
source .gpu/env.sh
cd .gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/tests.log
(timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -4; timeout 120 ./test_adversarial --include-ignored segmented 2>&1 | tail -3; timeout 60 ./test_gpu_graph --include-ignored 2>&1 | tail -3) >> $OUT/tests.log 2>&1
cd ..
timeout 260 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_gpu_segmented_sort > /dev/null 2>&1
cd .gpu
for round in 1 2; do
  for chain in pdl own; do
    TWOPHASE_BENCH_CHAIN=$chain TWOPHASE_BENCH_LOG2N=25 TWOPHASE_BENCH_ROW=u64 timeout 60 ./bench_gpu_segmented_sort 2>&1 | grep -E "^\| seg|^device" | sed "s/^/$chain r$round: /" >> $OUT/ab.log
    TWOPHASE_BENCH_CHAIN=$chain TWOPHASE_BENCH_LOG2N=25 TWOPHASE_BENCH_LONG=1 timeout 60 ./bench_gpu_segmented_sort 2>&1 | grep -E "^long|^device" | sed "s/^/$chain r$round: /" >> $OUT/ab.log
  done
done
cat $OUT/tests.log $OUT/sanitizer_summary.txt; cut -c1-150 $OUT/ab.log
rm -f $OUT/sanitize_*.log; ls $OUT
