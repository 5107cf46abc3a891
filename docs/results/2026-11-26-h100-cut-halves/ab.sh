#!/usr/bin/env bash
# base (d4ad5b2) against new (select_runs loading both halves' middles), alternating, one cache.
cd "$(dirname "$0")"
nvrtc_lib=$(python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${nvrtc_lib}:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
export TWOPHASE_CACHE_DIR=$(mktemp -d /tmp/tpcache.XXXXXX); chmod 700 $TWOPHASE_CACHE_DIR
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  for b in base new; do
    exe=./bench_gpu_mergesort; [ $b = base ] && exe=./bench_base_gpu_mergesort
    for kind in u32 u64 u32-pairs; do
      echo "== round $round $b $kind"
      TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_KIND=$kind $exe 2>&1 | grep -E "^\| twophase|copy|panick|rror"
    done
  done
done 2>&1 | tee $OUT/ab.log
