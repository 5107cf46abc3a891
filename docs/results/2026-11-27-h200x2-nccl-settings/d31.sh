# Issue 20: u64 2^30 on two H200s with NCCL's channel counts raised, a process a setting (default first, between and last).
cd "$(dirname "$0")/.."
export TWOPHASE_BENCH_LOG2N=30 TWOPHASE_BENCH_U64_ONLY=1 TWOPHASE_BENCH_EACH_RUN=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/d31.log
run() { label=$1; shift; echo "== $label" >> $OUT/d31.log; s=$(date +%s)
  env "$@" timeout 110 bash .gpu/run.sh bench_gpu_sharded 2>&1 | grep -E "^\| u64|each run" >> $OUT/d31.log; echo "(rc $? $(( $(date +%s)-s ))s)" >> $OUT/d31.log; }
run default X=1
run p2p32 NCCL_MIN_P2P_NCHANNELS=32 NCCL_NCHANNELS_PER_PEER=32 NCCL_MIN_NCHANNELS=32
run perpeer4 NCCL_NCHANNELS_PER_PEER=4
run default2 X=1
run minctas32 NCCL_MIN_CTAS=32
run p2p16 NCCL_MIN_P2P_NCHANNELS=16 NCCL_NCHANNELS_PER_PEER=16
run p2p32b NCCL_MIN_P2P_NCHANNELS=32 NCCL_NCHANNELS_PER_PEER=32 NCCL_MIN_NCHANNELS=32
run default3 X=1
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P TWOPHASE_BENCH_LOG2N=24 timeout 60 bash .gpu/run.sh bench_gpu_sharded 2>&1 | grep -iE "channel|nccl version|P2P" | head -30 >> $OUT/d31.log
cat $OUT/d31.log
