# Issue 20: the lead as committed (it skips sorts too small to stream): test_gpu_sharded, 2^24 all rows and 2^30 u64 with the lead and without.
cd "$(dirname "$0")/.."
log=$OUT/d38.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
timeout 200 bash .gpu/run.sh test_gpu_sharded > $OUT/d38_sharded.log 2>&1
grep -E "test result|FAILED|panicked" $OUT/d38_sharded.log >> $log
TWOPHASE_BENCH_LOG2N=24 TWOPHASE_BENCH_LEAD_OFF=1 timeout 70 bash .gpu/run.sh bench_gpu_sharded > $OUT/d38_bench_24.log 2>&1
grep -E "^\| u|^devices|panicked" $OUT/d38_bench_24.log >> $log
TWOPHASE_BENCH_LOG2N=30 TWOPHASE_BENCH_U64_ONLY=1 TWOPHASE_BENCH_LEAD_OFF=1 timeout 150 bash .gpu/run.sh bench_gpu_sharded > $OUT/d38_bench_30.log 2>&1
grep -E "^\| u|^devices|panicked" $OUT/d38_bench_30.log >> $log
cat $log
