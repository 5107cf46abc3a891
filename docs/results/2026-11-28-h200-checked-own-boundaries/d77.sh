# H200: HEAD (main) and the branch (checks next to each barrier) alternating: the user comparators at 2^20-2^22, then the trusted u32, u64 and u32 pairs at 2^20 and 2^24 (their tile kernels recompiled with the new parameters).
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d77.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1
bench_pair() {  # kind sizes
  for b in bench_head_gpu_mergesort bench_gpu_mergesort bench_head_gpu_mergesort bench_gpu_mergesort; do
    echo "== $b $1" >> $log
    TWOPHASE_BENCH_KIND=$1 TWOPHASE_BENCH_SIZES=$2 timeout 40 .gpu/$b > $OUT/d77_b.log 2>&1
    grep -E "^\| twophase|panicked|copy rate" $OUT/d77_b.log >> $log
  done
}
bench_pair u32-top8 20,21,22
bench_pair u32-user 20,21,22
bench_pair u32 20,24
bench_pair u32-pairs 20,24
bench_pair u64 20,24
cat $log
