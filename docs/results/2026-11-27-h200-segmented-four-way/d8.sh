# Four-way merge levels in the segmented sort: the GPU tests (segmented sort, mergesort), then an
# A/B at 2^27, base (ea005eb: two-way levels only) and new alternating, two rounds: the long rows
# (one segment of 7/8, 1/2, 1/8 among uniform 1..2000, with the plain mergesort), u64 rows,
# power law and pairs.
source .gpu/env.sh; cd .gpu
timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | grep -E "^test |test result|panicked" | tee $OUT/test_gpu_segmented_sort.log | tail -18
timeout 150 ./test_gpu_mergesort --include-ignored 2>&1 | grep -E "test result|FAILED|panicked" | tee $OUT/test_gpu_mergesort.log
for r in 1 2; do
  for b in base new; do
    TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_LONG=1 timeout 100 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^long|device:" | sed "s/^/$b $r: /" | tee -a $OUT/long.log
    for row in u64 powerlaw pairs; do
      TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_ROW=$row timeout 60 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/$b $r: /" | tee -a $OUT/rows.log
    done
  done
done
