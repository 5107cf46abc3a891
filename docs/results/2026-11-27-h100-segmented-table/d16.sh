# H100: the segmented sort's table against CUB's peer (every row and size), then the u32 long rows.
source .gpu/env.sh; cd .gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/device.txt
nvcc -O3 -std=c++17 -arch=sm_90 cub_segmented_sort.cu -o cub_segmented_sort 2>&1 | tail -3
timeout 300 ./cub_segmented_sort $OUT/cub_segmented_sort.txt > $OUT/cub_segmented_sort.log 2>&1; echo "cub rc $?"
export TWOPHASE_CUB_SEGMENTED_RESULTS=$OUT/cub_segmented_sort.txt
timeout 150 ./bench_new_gpu_segmented_sort > $OUT/bench_gpu_segmented_sort.log 2>&1; echo "bench rc $?"
TWOPHASE_BENCH_LOG2N=27 TWOPHASE_BENCH_LONG=1 timeout 60 ./bench_new_gpu_segmented_sort > $OUT/long_rows.log 2>&1; echo "long rc $?"
grep -E "^\| seg|device:" $OUT/bench_gpu_segmented_sort.log; grep -E "^long" $OUT/long_rows.log
