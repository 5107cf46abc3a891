# The segmented sort's launches chained (PDL) and the merge levels' own partition searches:
# full-size segmented and adversarial tests, CUB at 2^20 and 2^24, the three chains in one
# binary at 2^20 and 2^24 (two rounds), 2^27 rows against ddf18ff (bench_base), sanitizers.
source .gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cd .gpu && timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -4; timeout 120 ./test_adversarial --include-ignored segmented 2>&1 | tail -3) | tee $OUT/tests.log
cd .gpu
nvcc -O3 -std=c++17 -arch=sm_90 cub_segmented_sort.cu -o cub_segmented_sort 2>&1 | tail -3
for l in 20 24; do TWOPHASE_BENCH_LOG2N=$l timeout 120 ./cub_segmented_sort $OUT/cub_segmented_$l.txt > $OUT/cub.log 2>&1; echo "cub $l rc $?"; done
cat $OUT/cub_segmented_20.txt $OUT/cub_segmented_24.txt > $OUT/cub_segmented_sort.txt; rm $OUT/cub_segmented_2?.txt
export TWOPHASE_CUB_SEGMENTED_RESULTS=$OUT/cub_segmented_sort.txt
for round in 1 2; do
  for l in 20 24; do
    for chain in none pdl own; do
      TWOPHASE_BENCH_CHAIN=$chain TWOPHASE_BENCH_LOG2N=$l timeout 100 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^\| seg|^device" | sed "s/^/$chain r$round: /" | tee -a $OUT/ab.log
    done
  done
done
for b in base new; do
  for row in uniform2000 pairs; do
    TWOPHASE_BENCH_ROW=$row TWOPHASE_BENCH_LOG2N=27 timeout 60 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/$b: /" | tee -a $OUT/rows27.log
  done
  TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_LONG=7/8 timeout 60 ./bench_${b}_gpu_segmented_sort 2>&1 | grep -E "^long" | sed "s/^/$b: /" | tee -a $OUT/rows27.log
done
cd ..
timeout 280 bash .gpu/run.sh sanitize memcheck racecheck synccheck test_gpu_segmented_sort > $OUT/sanitize.log 2>&1
cat $OUT/sanitizer_summary.txt
cd $OUT && tar czf sanitize_logs.tgz sanitize_*.log 2>/dev/null; rm -f sanitize_*.log; ls
