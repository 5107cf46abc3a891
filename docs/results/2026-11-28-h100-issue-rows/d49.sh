# H100: every mergesort row of the performance issue, shipped tunings, with CUB merge sort and radix sort (cub_mergesort) in the same command.
cd "$(dirname "$0")/.."
log=$OUT/d49.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
TWOPHASE_BENCH_SHIPPED_ONLY=1 timeout 570 bash .gpu/run.sh bench_gpu_mergesort > $OUT/d49_run.log 2>&1
echo "run.sh rc $?" >> $log
grep -E "^== |^\| twophase|^\| cub|copy rate|^device|panicked|CUB" $OUT/d49_run.log >> $log
cat $log
