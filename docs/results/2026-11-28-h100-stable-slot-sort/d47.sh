# H100: u32 under the top-8-bit comparator, the HEAD build (transposition register sort) and the stable slot sort (shipped rows and VT 45 / 37 sweep), with CUB merge sort's same functor in the same command.
cd "$(dirname "$0")/.."
log=$OUT/d47.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
TWOPHASE_PEERS=cub_mergesort TWOPHASE_BENCH_KIND=u32-top8 timeout 540 bash .gpu/run.sh bench_base_gpu_mergesort bench_gpu_mergesort bench_base_gpu_mergesort bench_gpu_mergesort > $OUT/d47_run.log 2>&1
grep -E "^== |^\| twophase|^\| cub|^sweep|copy rate|^device|panicked" $OUT/d47_run.log >> $log
cat $log
