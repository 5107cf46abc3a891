nvrtc_lib=$(python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${nvrtc_lib}:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
OUT=${OUT:-/tmp/twophase-out}; mkdir -p "$OUT"
cache_dir=$(mktemp -d /tmp/tp-cache.XXXXXXXX); chmod 700 "$cache_dir"; export TWOPHASE_CACHE_DIR=$cache_dir
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv
