#!/usr/bin/env bash
#! On the GPU machine: build the CUB peers, run the GPU tests, then the peers and GPU benchmarks; or run the GPU tests under compute-sanitizer.
#
# Usage (from the repository root, the folder filled by scripts/device.sh, default .gpu/):
#   bash .gpu/run.sh [NAME ...]   NAME = main_<x>, example_<x>, test_<x> or bench_<x> from the folder; default: all.
#   bash .gpu/run.sh cli          the twophase command on 2^27 keys, checked by NumPy, and its bench (cli.sh).
#   bash .gpu/run.sh sanitize [TOOL ...] [test_<x> ...]
#                                 compute-sanitizer over the GPU tests (TOOL = memcheck, racecheck,
#                                 synccheck, initcheck; default: all four; test_<x>: only those
#                                 binaries). TWOPHASE_SANITIZE=1 selects this mode too.
# A full run is both commands: the normal one, then the sanitize one (each within the device's
# ten minutes a command).
# The folder is the one this script lies in (TWOPHASE_GPU_DIR overrides it).
# Logs and results go to $OUT (the device tool's output folder) or /tmp/twophase-out; the
# sanitize mode writes $OUT/sanitizer_summary.txt (tool, binary, filter, count, seconds, result).
# Kernels are cached in a private folder made for this run (mode 700) and removed at the end.
set -uo pipefail
OUT=${OUT:-/tmp/twophase-out}
mkdir -p "$OUT"
GPU_DIR=${TWOPHASE_GPU_DIR:-$(dirname "$0")}
nvrtc_lib=$(python3 -c 'import nvidia, os; print(os.path.join(nvidia.__path__[0], "cu13", "lib"))' 2>/dev/null)
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${nvrtc_lib}:${LD_LIBRARY_PATH:-}
# NVLink multicast stays off: a program that uses it can take the host's shared GPUs out of
# service (the device notes). Never unset.
export NCCL_NVLS_ENABLE=0
# NCCL for the sort across GPUs: the PyTorch wheel's libnccl.so.2, under the name cudarc loads
# (libnccl.so), in a private folder.
nccl_so=$(python3 -c 'import glob, site
for root in site.getsitepackages():
    for lib in glob.glob(root + "/nvidia/**/libnccl.so.2", recursive=True):
        print(lib); raise SystemExit' 2>/dev/null)
if [ -n "$nccl_so" ]; then
  nccl_dir=$(mktemp -d "${TMPDIR:-/tmp}/twophase-nccl.XXXXXXXX")
  ln -s "$nccl_so" "$nccl_dir/libnccl.so"
  export LD_LIBRARY_PATH=$nccl_dir:$LD_LIBRARY_PATH
fi
# A kernel cache private to this run: never a shared, world-writable folder that another user
# could fill with cubins for us to load.
cache_dir=$(mktemp -d "${TMPDIR:-/tmp}/twophase-cache.XXXXXXXX") || { echo "mktemp failed"; exit 1; }
chmod 700 "$cache_dir"
trap 'rm -rf "$cache_dir"' EXIT
export TWOPHASE_CACHE_DIR=$cache_dir
# Each benchmark finds the results of its CUB peer here.
export TWOPHASE_CUB_RESULTS=$OUT/cub_merge.txt
export TWOPHASE_CUB_SORT_RESULTS=$OUT/cub_mergesort.txt
export TWOPHASE_CUB_SEGMENTED_RESULTS=$OUT/cub_segmented_sort.txt
# The variant benchmark's CSV (scripts/plots.sh draws it).
export TWOPHASE_VARIANTS_CSV=$OUT/variants.csv
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.total --format=csv

# ---- the command line ----

# `run.sh cli`: the twophase command at the GPU's sizes (scripts/cli-device.sh, copied as cli.sh).
if [ "${1:-}" = cli ]; then
  bash "$GPU_DIR/cli.sh"
  exit $?
fi

mode=normal
if [ "${1:-}" = sanitize ]; then
  mode=sanitize
  shift
elif [ -n "${TWOPHASE_SANITIZE:-}" ] && [ "${TWOPHASE_SANITIZE}" != 0 ]; then
  mode=sanitize
fi

# ---- compute-sanitizer mode ----

SANITIZER=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
# Seconds for all sanitizer runs together: a run gets what is left, and runs past it are listed
# as not run, so that the command ends (with its summary) inside the device's ten minutes.
SANITIZE_BUDGET_S=${TWOPHASE_SANITIZE_BUDGET_S:-480}
# Tests that fault on purpose (context recovery) are no sanitizer finding: never run here.
SANITIZE_SKIP=${TWOPHASE_SANITIZE_SKIP:---skip deliberate_fault}
# The other binaries' full-size tests (2^26-2^27 keys, past 2^31), far too slow under memcheck.
FULL_SIZE_SKIP="--skip 2_pow_2 --skip past_"
summary=$OUT/sanitizer_summary.txt
sanitize_start=$SECONDS
sanitize_status=0

# One sanitizer run: tool, binary, the test name filter ("" for all), and more arguments for
# the test binary (skips).
sanitize_run() {
  local tool=$1 binary=$2 filter=$3
  local exe="$GPU_DIR/$binary"
  local label=${filter:-all}
  [ -z "${4:-}" ] || label="$label, not ${4//--skip /}"
  local log="$OUT/sanitize_${tool}_${binary}_$(printf '%s' "$label" | tr -c 'A-Za-z0-9_' '_').log"
  local left=$((SANITIZE_BUDGET_S - (SECONDS - sanitize_start)))
  if [ ! -x "$exe" ]; then
    printf '%-10s %-22s %-40s %10s %8s  %s\n' "$tool" "$binary" "$label" - - "missing" >>"$summary"
    sanitize_status=1
    return
  fi
  if [ "$left" -lt 15 ]; then
    printf '%-10s %-22s %-40s %10s %8s  %s\n' "$tool" "$binary" "$label" - - "not run (budget)" >>"$summary"
    sanitize_status=1
    return
  fi
  echo "== $tool $binary $label (at most ${left}s)"
  local t0=$SECONDS
  local skips="$SANITIZE_SKIP ${4:-}"
  # The sort across GPUs: NCCL's send and receive kernels on two devices of one process wait on
  # each other, and the tool runs one kernel at a time, so with NCCL's default transport the
  # first exchange never ends. Its copy-engine transport moves the pieces without kernels; NCCL's
  # own start-up probes fail CUDA calls on purpose (a kernel image per architecture, peer access
  # enabled twice), so API errors are not counted there: a failed call of twophase's own fails
  # its test.
  local nccl_env=() api_args=()
  if [ "$binary" = test_gpu_sharded ]; then
    nccl_env=(NCCL_P2P_USE_CUDA_MEMCPY=1)
    api_args=(--report-api-errors no)
  fi
  # The filter and the skip lists are word lists: unquoted on purpose.
  # shellcheck disable=SC2086
  env "${nccl_env[@]}" TWOPHASE_TEST_SCALE=small timeout --kill-after=10 "$left" \
    "$SANITIZER" --tool "$tool" --error-exitcode 1 "${api_args[@]}" \
    "$exe" --include-ignored --test-threads=1 $filter $skips >"$log" 2>&1
  local rc=$?
  local secs=$((SECONDS - t0))
  local line
  line=$(grep -E '(ERROR|RACECHECK|SYNCCHECK|INITCHECK) SUMMARY' "$log" | tail -1)
  echo "${line:-no sanitizer summary line} (rc $rc, ${secs}s)"
  grep -E '^test result|panicked' "$log" | head -5
  local count result
  count=$(printf '%s' "$line" | grep -Eo 'SUMMARY: [0-9]+' | grep -Eo '[0-9]+$')
  case $rc in
    0) result=ok ;;
    124 | 137) result="timeout" ;;
    *) if [ "${count:-0}" != 0 ]; then result="sanitizer errors"; else result="tests failed (rc $rc)"; fi ;;
  esac
  [ "$rc" -eq 0 ] && [ "${count:-0}" = 0 ] || sanitize_status=1
  printf '%-10s %-22s %-40s %10s %8s  %s\n' "$tool" "$binary" "$label" "${count:--}" "$secs" "$result" >>"$summary"
}

if [ "$mode" = sanitize ]; then
  tools=()
  binaries=()
  for arg in "$@"; do
    case $arg in
      memcheck | racecheck | synccheck | initcheck) tools+=("$arg") ;;
      test_*) binaries+=("$arg") ;;
      *) echo "unknown sanitize argument: $arg"; exit 2 ;;
    esac
  done
  [ ${#tools[@]} -gt 0 ] || tools=(memcheck racecheck synccheck initcheck)
  if [ ${#binaries[@]} -eq 0 ]; then
    # test_gpu_recovery faults on purpose (its only test is skipped by SANITIZE_SKIP anyway).
    binaries=($(cd "$GPU_DIR" && ls test_adversarial test_gpu_* 2>/dev/null | grep -vx test_gpu_recovery))
  fi
  wants_tool() { printf '%s\n' "${tools[@]}" | grep -qx "$1"; }
  wants_binary() { printf '%s\n' "${binaries[@]}" | grep -qx "$1"; }
  "$SANITIZER" --version | tail -1
  printf '%-10s %-22s %-40s %10s %8s  %s\n' tool binary filter count seconds result >"$summary"
  # Rows by priority (the budget cuts the last ones first): the adversarial suite under memcheck,
  # the shared-memory tiles under racecheck and synccheck (the mergesort block sort with two-way
  # and four-way passes, the sorted search and the load-balancing tiles: the `tiles_` tests of
  # tests/adversarial.rs, small fixed sizes; the segmented sort's: its `tiles` test), the staging paths under initcheck, then memcheck
  # over every other GPU test binary at reduced sizes.
  if wants_tool memcheck && wants_binary test_adversarial; then
    sanitize_run memcheck test_adversarial ""
  fi
  for tool in racecheck synccheck; do
    if wants_tool "$tool" && wants_binary test_adversarial; then
      sanitize_run "$tool" test_adversarial tiles_
    fi
    # The segmented sort's block sort and merge levels.
    if wants_tool "$tool" && wants_binary test_gpu_segmented_sort; then
      sanitize_run "$tool" test_gpu_segmented_sort segmented_sort_tiles
    fi
  done
  if wants_tool initcheck && wants_binary test_adversarial; then
    sanitize_run initcheck test_adversarial staging_
  fi
  if wants_tool memcheck; then
    for binary in "${binaries[@]}"; do
      [ "$binary" = test_adversarial ] && continue
      sanitize_run memcheck "$binary" "" "$FULL_SIZE_SKIP"
    done
  fi
  echo "== sanitizer summary ($((SECONDS - sanitize_start))s; counts: errors, or hazards for racecheck)"
  cat "$summary"
  exit $sanitize_status
fi

# ---- normal mode ----

selected=("$@")
if [ ${#selected[@]} -eq 0 ]; then
  selected=($(cd "$GPU_DIR" && ls main_* example_* test_* bench_* 2>/dev/null))
fi

# Peers: cub_<x> for each bench_gpu_<x>; the variant benchmark reads the merge and mergesort
# peers' results (TWOPHASE_PEERS names fewer, e.g. `cub_merge` with TWOPHASE_VARIANTS_GROUP=merge).
# Each is built once, in the background while the tests run.
peers=()
for bench in "${selected[@]}"; do
  case $bench in
    bench_gpu_variants) wanted=${TWOPHASE_PEERS:-cub_merge cub_mergesort} ;;
    bench_gpu_*) wanted=cub_${bench#bench_gpu_} ;;
    *) continue ;;
  esac
  for peer in $wanted; do
    [ -f "$GPU_DIR/$peer.cu" ] || continue
    printf '%s\n' "${peers[@]}" | grep -qx "$peer" && continue
    peers+=("$peer")
    (nvcc -O3 -std=c++17 -arch=sm_90 "$GPU_DIR/$peer.cu" -o "/tmp/$peer" >"/tmp/$peer.build.log" 2>&1 \
      || { echo "nvcc failed for $peer"; cat "/tmp/$peer.build.log"; }) &
  done
done

status=0
for name in "${selected[@]}"; do
  case $name in main_* | example_*) ;; *) continue ;; esac
  echo "== $name"
  "$GPU_DIR/$name" 2>&1 | tee "$OUT/$name.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
for name in "${selected[@]}"; do
  case $name in test_*) ;; *) continue ;; esac
  echo "== $name"
  "$GPU_DIR/$name" --include-ignored --test-threads=1 2>&1 \
    | tee "$OUT/$name.log" | grep -E "^test |test result|panicked|differs|seed|SKIPPED"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
wait
for peer in "${peers[@]}"; do
  echo "== $peer"
  "/tmp/$peer" "$OUT/$peer.txt" 2>&1 | tee "$OUT/$peer.log" || status=1
done
for name in "${selected[@]}"; do
  case $name in bench_*) ;; *) continue ;; esac
  echo "== $name"
  "$GPU_DIR/$name" 2>&1 | tee "$OUT/$name.log" || status=1
done
exit $status
