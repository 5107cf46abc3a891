# Issue 20: u64 2^30 on two H200s under NCCL transport settings, a process each (default first and last).
cd "$(dirname "$0")/.."
export TWOPHASE_BENCH_LOG2N=30 TWOPHASE_BENCH_U64_ONLY=1 TWOPHASE_BENCH_EACH_RUN=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/d28.log
nvidia-smi topo -m >> $OUT/d28.log 2>&1
run() { label=$1; shift; echo "== $label" >> $OUT/d28.log; s=$(date +%s)
  env "$@" timeout 110 bash .gpu/run.sh bench_gpu_sharded 2>&1 | grep -vE "^== " >> $OUT/d28.log; echo "(rc $? $(( $(date +%s)-s ))s)" >> $OUT/d28.log; }
run default X=1
run ce NCCL_P2P_USE_CUDA_MEMCPY=1
run noread NCCL_P2P_READ_ENABLE=0
run chunk2m NCCL_P2P_NVL_CHUNKSIZE=2097152 NCCL_BUFFSIZE=16777216
for e in X=1 NCCL_P2P_USE_CUDA_MEMCPY=1; do echo "== a2a $e" >> $OUT/d28.log
  env $e NCCL_NVLS_ENABLE=0 timeout 60 python3 .gpu/nccl_bandwidth.py 31 >> $OUT/d28.log 2>&1; done
run default2 X=1
cat $OUT/d28.log | grep -vE "^test |^\s*$" | cut -c1-220
