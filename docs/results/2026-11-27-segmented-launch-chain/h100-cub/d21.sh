# H100: CUB's segmented sort peer and ours (as shipped: PDL, own partitions) at 2^20 and 2^24.
source .gpu/env.sh; cd .gpu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O3 -std=c++17 -arch=sm_90 cub_segmented_sort.cu -o cub_segmented_sort 2>&1 | tail -3
for l in 20 24; do TWOPHASE_BENCH_LOG2N=$l timeout 100 ./cub_segmented_sort $OUT/cub_$l.txt >> $OUT/cub_segmented_sort.log 2>&1; echo "cub $l rc $?"; done
cat $OUT/cub_20.txt $OUT/cub_24.txt > $OUT/cub_segmented_sort.txt; rm $OUT/cub_2?.txt
export TWOPHASE_CUB_SEGMENTED_RESULTS=$OUT/cub_segmented_sort.txt
for l in 20 24; do TWOPHASE_BENCH_LOG2N=$l timeout 90 ./bench_new_gpu_segmented_sort >> $OUT/bench_gpu_segmented_sort.log 2>&1; echo "bench $l rc $?"; done
TWOPHASE_BENCH_LOG2N=20 timeout 60 ./bench_new_gpu_segmented_sort 2>&1 | grep -E "^\| seg" | sed "s/^/round 2: /" >> $OUT/bench_gpu_segmented_sort.log
grep -E "seg|device" $OUT/bench_gpu_segmented_sort.log | cut -c1-160
