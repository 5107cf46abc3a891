#!/usr/bin/env bash
#! Build the GPU tests and benchmark here, collect them in .gpu/, and print the one device command.
#
# Usage: scripts/device.sh   (then run the printed command on the GPU machine, carrying .gpu)
# The device command: builds the CUB peer with nvcc, runs the GPU tests with --include-ignored
# (a missing GPU fails them), runs the CUB peer (writing .gpu/cub.txt), then the twophase bench,
# which prints the comparison table.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release --workspace --no-run 2>&1 | tee /tmp/twophase-build.log >&2
cargo build --release --benches >&2
rm -rf .gpu && mkdir -p .gpu
# Test and bench executables: the newest of each name under target/release/deps.
for exe in $(cargo test --release --workspace --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import sys,json
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"].startswith(("gpu_","kernels_compile")):
        print(m["executable"])'); do
  cp "$exe" ".gpu/$(basename "$exe" | sed 's/-[0-9a-f]*$//')"
done
for exe in $(cargo build --release --benches --message-format=json 2>/dev/null \
    | python3 -c 'import sys,json
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="gpu_merge" and "bench" in m["target"]["kind"]:
        print(m["executable"])'); do
  cp "$exe" .gpu/bench_gpu_merge
done
strip --strip-debug .gpu/bench_gpu_merge .gpu/gpu_merge .gpu/kernels_compile 2>/dev/null || true
cp benches/peers/cub_merge.cu .gpu/
ls -la .gpu >&2
cat <<'CMD'
# Device command (run tool, carry [".gpu"]):
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$(python3 -c 'import nvidia,os;print(os.path.join(nvidia.__path__[0],"cu13","lib"))' 2>/dev/null):${LD_LIBRARY_PATH:-}; export TWOPHASE_CACHE_DIR=/tmp/twophase-cache; set -o pipefail; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; (nvcc -O3 -std=c++17 -arch=sm_90 .gpu/cub_merge.cu -o /tmp/cub_merge 2>&1 | tail -5) & for t in .gpu/gpu_merge .gpu/kernels_compile; do $t --include-ignored --test-threads=1 2>&1 | tail -25 | tee -a $OUT/tests.log; done; wait; /tmp/cub_merge $OUT/cub.txt | tee $OUT/cub.log; TWOPHASE_CUB_RESULTS=$OUT/cub.txt .gpu/bench_gpu_merge 2>&1 | tee $OUT/bench.log
CMD
