#!/usr/bin/env bash
#! Build the GPU tests and benchmarks here, collect them in .gpu/, and print the one device command.
#
# Usage: scripts/device.sh
# Then run the printed command on the GPU machine with `.gpu` carried (the device tool's `run`,
# carry [".gpu"]). On the device, .gpu/run.sh (a copy of scripts/device-run.sh) builds the CUB
# peers with nvcc, runs every GPU test executable with --include-ignored (a missing GPU fails
# them), then every peer and every GPU benchmark, each benchmark reading its peer's results.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu && mkdir -p .gpu
# Test executables whose target name starts with gpu_ or is kernels_compile, as test_<name>.
cargo test --release --workspace --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    t = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "test" in t["kind"] and t["name"].startswith(("gpu_", "kernels_compile")):
        print(t["name"], m["executable"])' \
  | while read -r name exe; do cp "$exe" ".gpu/test_$name"; done
# Benchmark executables whose target name starts with gpu_, as bench_<name>.
cargo build --release --benches --message-format=json 2>/dev/null \
  | python3 -c 'import sys, json
for line in sys.stdin:
    m = json.loads(line)
    t = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "bench" in t["kind"] and t["name"].startswith("gpu_"):
        print(t["name"], m["executable"])' \
  | while read -r name exe; do cp "$exe" ".gpu/bench_$name"; done
# The main job (README's first command), run on the GPU there.
cargo build --release --bin twophase >&2
cp target/release/twophase .gpu/main_twophase
# The GPU examples the README lists, as example_<name>.
cargo build --release --examples >&2
for src in examples/*.rs; do name=$(basename "$src" .rs); cp "target/release/examples/$name" ".gpu/example_$name"; done
strip --strip-debug .gpu/test_* .gpu/bench_* .gpu/main_* .gpu/example_* 2>/dev/null || true
cp benches/peers/*.cu .gpu/
cp scripts/device-run.sh .gpu/run.sh
cp scripts/ncu_mergesort.py .gpu/
ls -la .gpu >&2
du -sh .gpu >&2
cat <<'CMD'
# Device command (run tool, carry [".gpu"]); name executables to run only those:
bash .gpu/run.sh            # or e.g.: bash .gpu/run.sh test_gpu_mergesort bench_gpu_mergesort
CMD
