#!/usr/bin/env bash
#! Build the GPU tests and benchmarks here, collect them in $TWOPHASE_GPU_DIR (default .gpu/), and print the one device command.
#
# Usage: scripts/device.sh                       (collects into .gpu/)
#        TWOPHASE_GPU_DIR=/path/to/dir scripts/device.sh   (any folder, e.g. another checkout's .gpu6)
# Then run the printed commands on the GPU machine with the folder carried (the device tool's
# `run`, carry [".gpu"]). On the device, <dir>/run.sh (a copy of scripts/device-run.sh) builds
# the CUB peers with nvcc, runs every GPU test executable with --include-ignored (a missing GPU
# fails them), then every peer and every GPU benchmark, each benchmark reading its peers' results;
# `<dir>/run.sh sanitize` runs the GPU tests under compute-sanitizer (memcheck, racecheck,
# synccheck, initcheck) at reduced sizes. A full run is both commands.
set -euo pipefail
cd "$(dirname "$0")/.."
GPU_DIR=${TWOPHASE_GPU_DIR:-.gpu}
rm -rf "$GPU_DIR" && mkdir -p "$GPU_DIR"
# Test executables whose target name starts with gpu_ or is kernels_compile or adversarial, as
# test_<name>.
cargo test --release --workspace --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    t = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "test" in t["kind"] and t["name"].startswith(("gpu_", "kernels_compile", "adversarial")):
        print(t["name"], m["executable"])' \
  | while read -r name exe; do cp "$exe" "$GPU_DIR/test_$name"; done
# Benchmark executables whose target name starts with gpu_, as bench_<name>.
cargo build --release --benches --message-format=json 2>/dev/null \
  | python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    t = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "bench" in t["kind"] and t["name"].startswith("gpu_"):
        print(t["name"], m["executable"])' \
  | while read -r name exe; do cp "$exe" "$GPU_DIR/bench_$name"; done
# The main job (README's first command) and the twophase command (`run.sh cli`, cli.sh), run
# on the GPU there.
target_dir=${CARGO_TARGET_DIR:-target}
cargo build --release --bin twophase >&2
cp "$target_dir/release/twophase" "$GPU_DIR/main_twophase"
# The GPU examples the README lists, as example_<name>.
cargo build --release --examples >&2
for src in examples/*.rs; do name=$(basename "$src" .rs); cp "$target_dir/release/examples/$name" "$GPU_DIR/example_$name"; done
strip --strip-debug "$GPU_DIR"/test_* "$GPU_DIR"/bench_* "$GPU_DIR"/main_* "$GPU_DIR"/example_* 2>/dev/null || true
cp benches/peers/*.cu benches/peers/*.cuh "$GPU_DIR/"
cp scripts/device-run.sh "$GPU_DIR/run.sh"
cp scripts/cli-device.sh "$GPU_DIR/cli.sh"
cp scripts/ncu_mergesort.py scripts/nccl_bandwidth.py "$GPU_DIR/"
ls -la "$GPU_DIR" >&2
du -sh "$GPU_DIR" >&2
name=$(basename "$GPU_DIR")
cat <<CMD
# Device commands (run tool, carry ["$name"], the folder at the repository root there), one
# each; name executables to run only those:
bash $name/run.sh            # or e.g.: bash $name/run.sh test_gpu_variants bench_gpu_variants
bash $name/run.sh sanitize   # or e.g.: bash $name/run.sh sanitize racecheck synccheck
bash $name/run.sh cli        # the twophase command: 2^27 u32 .npy on the GPU and the CPU, bench
CMD
