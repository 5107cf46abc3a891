# Issue 20: the lead (exchange begun inside the last merge pass) on two H200s: the sharded tests, the mergesort tests (split last pass), memcheck of the sharded tests at small scale.
cd "$(dirname "$0")/.."
log=$OUT/d34.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
timeout 260 bash .gpu/run.sh test_gpu_sharded > $OUT/d34_sharded.log 2>&1
grep -E "^test |test result|FAILED|panicked" $OUT/d34_sharded.log >> $log
timeout 200 bash .gpu/run.sh test_gpu_mergesort > $OUT/d34_mergesort.log 2>&1
grep -E "test result|FAILED|panicked" $OUT/d34_mergesort.log >> $log
timeout 110 bash .gpu/run.sh sanitize memcheck test_gpu_sharded >> $OUT/d34_sanitize.log 2>&1
cat $OUT/sanitizer_summary.txt >> $log 2>/dev/null
cat $log
