# Issue 20: the lead on two H200s: test_gpu_sharded, then u32, pairs and u64 at 2^30 with the lead and without (two alternating rounds each).
cd "$(dirname "$0")/.."
log=$OUT/d36.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
timeout 200 bash .gpu/run.sh test_gpu_sharded > $OUT/d36_sharded.log 2>&1
grep -E "^test |test result|FAILED|panicked" $OUT/d36_sharded.log >> $log
TWOPHASE_BENCH_LOG2N=30 TWOPHASE_BENCH_LEAD_OFF=1 timeout 380 bash .gpu/run.sh bench_gpu_sharded > $OUT/d36_bench.log 2>&1
grep -E "^\| |^devices|rate|panicked" $OUT/d36_bench.log >> $log
cat $log
