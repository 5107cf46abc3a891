#!/usr/bin/env bash
# The segmented sort before the short path (base_) and now, alternating, in one command.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$(python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "lib"))')
export TWOPHASE_CACHE_DIR=$(mktemp -d); chmod 700 $TWOPHASE_CACHE_DIR
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2; do
  for b in base_bench_gpu_segmented_sort bench_gpu_segmented_sort; do
    echo "== $b 2^27 (round $i)"; TWOPHASE_BENCH_LOG2N=27 .gpu/$b 2>&1 | grep -E "copy rate|^\| seg"
  done
done
for b in base_bench_gpu_segmented_sort bench_gpu_segmented_sort; do
  echo "== $b all32"; TWOPHASE_BENCH_ROW=all32 .gpu/$b 2>&1 | grep -E "^\| seg"
done
