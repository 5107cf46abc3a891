# Issue 20: the streamed exchange's chunk weights for u64 at 2^30 on two H200s (two interleaved rounds), after test_gpu_sharded.
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/d32.log
timeout 200 bash .gpu/run.sh test_gpu_sharded 2>&1 | grep -E "test result|FAILED|panicked" >> $OUT/d32.log
TWOPHASE_BENCH_LOG2N=30 TWOPHASE_BENCH_U64_ONLY=1 TWOPHASE_BENCH_CHUNK_WEIGHTS=2:1,3:1,4:1,6:2:1,4:2:1,1 timeout 250 bash .gpu/run.sh bench_gpu_sharded 2>&1 | grep -E "^\| u64|^devices|weights" >> $OUT/d32.log
cat $OUT/d32.log
