# H200: eight-way passes from every size (TWOPHASE_BENCH_OCT_THREADS=128,256) beside the shipped tuning (eight-way from 1 GiB) for u64 keys and u32 pairs at 2^25 and 2^26, in the same process, two rounds.
cd "$(dirname "$0")/.."
source .gpu/env.sh
log=$OUT/d117.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
export TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_BENCH_SIZES=25,26 TWOPHASE_BENCH_OCT_THREADS=128,256
for round in 1 2; do
  for kind in u64 u32-pairs; do
    echo "== round $round $kind" >> $log
    TWOPHASE_BENCH_KIND=$kind timeout 100 .gpu/bench_gpu_mergesort > $OUT/d117_b.log 2>&1
    echo "rc $?" >> $log
    grep -E "^\| twophase|^eight-way|panicked|copy rate" $OUT/d117_b.log >> $log
  done
done
cat $log
