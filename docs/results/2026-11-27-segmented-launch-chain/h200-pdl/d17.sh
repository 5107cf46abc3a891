# Programmatic dependent launch in the segmented sort: full-size segmented tests, CUB's peer at
# 2^20 and 2^24, A/B against ddf18ff (bench_base) at 2^20 and 2^24, two rounds, then memcheck.
source .gpu/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
(cd .gpu && timeout 150 ./test_gpu_segmented_sort --include-ignored 2>&1 | tail -4 | tee $OUT/test_full.log)
cd .gpu
nvcc -O3 -std=c++17 -arch=sm_90 cub_segmented_sort.cu -o cub_segmented_sort 2>&1 | tail -3
for l in 20 24; do TWOPHASE_BENCH_LOG2N=$l timeout 120 ./cub_segmented_sort $OUT/cub_$l.txt > $OUT/cub_$l.log 2>&1; echo "cub $l rc $?"; done
cat $OUT/cub_20.txt $OUT/cub_24.txt > $OUT/cub_segmented_sort.txt
export TWOPHASE_CUB_SEGMENTED_RESULTS=$OUT/cub_segmented_sort.txt
for round in 1 2; do
  for l in 20 24; do
    for b in base new; do
      TWOPHASE_BENCH_LOG2N=$l timeout 100 ./bench_${b}_gpu_segmented_sort > $OUT/${b}_${l}_r$round.log 2>&1; echo "$b $l r$round rc $?"
      grep -E "^\| seg" $OUT/${b}_${l}_r$round.log | sed "s/^/$b r$round: /" | tee -a $OUT/ab.log
    done
  done
done
which nsys && TWOPHASE_BENCH_LOG2N=20 TWOPHASE_BENCH_ROW=all32 timeout 60 nsys profile -t cuda -o $OUT/all32_new ./bench_new_gpu_segmented_sort > /dev/null 2>&1 && nsys stats -q --report cuda_gpu_trace --format csv -o $OUT/all32_new $OUT/all32_new.nsys-rep > /dev/null 2>&1; ls $OUT | head -40
cd ..
timeout 240 bash .gpu/run.sh sanitize memcheck test_gpu_segmented_sort 2>&1 | tail -2
cat $OUT/sanitizer_summary.txt
