# The four-way merge kernel's partial tile after its loop (no spills): full-size segmented tests,
# A/B against d7e6cd2 (bench_base) at 2^27, u64 with four-way levels, then the sanitizers.
source .gpu/env.sh
(cd .gpu && timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -4 | tee $OUT/test_full.log)
cd .gpu
for round in 1 2; do
  for b in base new; do
    TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_LONG=1 timeout 60 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^long" | sed "s/^/$b r$round: /" | tee -a $OUT/ab_long.log
    [ $round = 1 ] || continue
    for row in powerlaw u64; do
      TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_ROW=$row timeout 40 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/$b r$round: /" | tee -a $OUT/ab_rows.log
    done
  done
  [ $round = 1 ] && TWOPHASE_BENCH_FOUR_WAY_FROM=0 TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_ROW=u64 timeout 40 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/new four-way from 0: /" | tee -a $OUT/ab_rows.log
done
cd ..
timeout 260 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_gpu_segmented_sort 2>&1 | tail -2
cat $OUT/sanitizer_summary.txt
