# H100: u32 mergesort with the 1024 x 45 block sort. test_gpu_mergesort, then bench_gpu_mergesort (u32 rows, CUB merge sort and radix sort peers in the same command; sweep VT 37 / 45 beside).
cd "$(dirname "$0")/.."
log=$OUT/d44.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
TWOPHASE_PEERS=cub_mergesort TWOPHASE_BENCH_KIND=u32 timeout 500 bash .gpu/run.sh test_gpu_mergesort bench_gpu_mergesort > $OUT/d44_run.log 2>&1
grep -E "test result|FAILED|panicked|^\| twophase|^\| cub|^sweep|copy rate|^device" $OUT/d44_run.log >> $log
cat $log
