# H100: merge (CUB DeviceMerge in the same command) and the searches, shipped tunings and their sweeps, against the copy rate.
cd "$(dirname "$0")/.."
log=$OUT/d50.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
timeout 570 bash .gpu/run.sh bench_gpu_merge bench_gpu_search > $OUT/d50_run.log 2>&1
echo "run.sh rc $?" >> $log
grep -E "^== |^\| |copy rate|^device|panicked|CUB" $OUT/d50_run.log >> $log
cat $log
