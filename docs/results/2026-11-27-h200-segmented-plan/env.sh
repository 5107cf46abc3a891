# Source on the device: the environment run.sh sets (NVRTC, NCCL off multicast, private cache).
nvrtc_lib=$(python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${nvrtc_lib}:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
export TWOPHASE_CACHE_DIR=$(mktemp -d /tmp/tpcache.XXXXXX)
export OUT=${OUT:-/tmp/twophase-out}
mkdir -p $OUT
