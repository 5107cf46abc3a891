# H100: 24-byte records under their user comparator (event24-user), the HEAD build (transposition register sort) and the stable slot sort, shipped rows, alternating, with CUB merge sort in the same command.
cd "$(dirname "$0")/.."
log=$OUT/d48.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
TWOPHASE_BENCH_SHIPPED_ONLY=1 TWOPHASE_PEERS=cub_mergesort TWOPHASE_BENCH_KIND=event24-user timeout 540 bash .gpu/run.sh bench_base_gpu_mergesort bench_gpu_mergesort bench_base_gpu_mergesort bench_gpu_mergesort > $OUT/d48_run.log 2>&1
grep -E "^== |^\| twophase|^\| cub|^sweep|copy rate|^device|panicked|event" $OUT/d48_run.log >> $log
cat $log
