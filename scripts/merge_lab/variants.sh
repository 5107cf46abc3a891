#!/usr/bin/env bash
#! Build the merge lab's cubins (sm_90): the shipped merge programs as generated now, re-shaped
#! and with checks turned off, for run.sh to time side by side on the GPU.
#
# Usage: scripts/merge_lab/variants.sh OUT_DIR [BASE_CUBIN_DIR]
#   OUT_DIR         where the .cubin files go (e.g. .gpu/lab, carried to the device)
#   BASE_CUBIN_DIR  optional: sm_90 cubins of the unchecked kernels (45bd522's kernels_compile
#                   dump: TWOPHASE_CUBIN_DUMP=DIR TWOPHASE_CUBIN_FILTER=merge_unsigned ...), copied
#                   as the "base" variants (old kernel arguments: run.sh passes abi b).
# Needs NVRTC (LD_LIBRARY_PATH as for the kernels_compile test) and python3.
set -euo pipefail
out=$(realpath -m "$1")
base=${2:-}
repo=$(cd "$(dirname "$0")/../.." && pwd)
src=$(mktemp -d)
mkdir -p "$out"
cd "$repo"
# The generated sources of the shipped merge programs (the dump writes each program's .cu).
for filter in unsigned_int_keys_less unsigned_int_v4a4_less unsigned_long_long_keys_less; do
  TWOPHASE_CUBIN_DUMP="$src" TWOPHASE_CUBIN_FILTER=$filter cargo test --release -q -p twophase-gpu \
    --test kernels_compile every_shipped >/dev/null
done
keys=$(ls "$src"/twophase_merge_b*_unsigned_int_keys_less_nt*.cu)
pairs=$(ls "$src"/twophase_merge_b*_unsigned_int_v4a4_less_nt*.cu)
wide=$(ls "$src"/twophase_merge_b*_unsigned_long_long_keys_less_nt*.cu)

# variant NAME SOURCE NT VT BLOCKS [checks: on|off]: a copy of SOURCE re-shaped, optionally with
# the partition and tile checks off (the cost of the checks at that shape).
variant() {
  local name=$1 file=$2 nt=$3 vt=$4 blocks=$5 checks=${6:-on}
  local cu="$src/${name}_nt${nt}_vt${vt}.cu"
  sed -e "s/^#define TP_NT .*/#define TP_NT $nt/" -e "s/^#define TP_VT .*/#define TP_VT $vt/" \
      -e "s/^#define TP_MIN_BLOCKS .*/#define TP_MIN_BLOCKS $blocks/" "$file" > "$cu"
  if [ "$checks" = off ]; then
    sed -i -e 's/TP_HAS_VALUES, true, true,/TP_HAS_VALUES, false, false,/' \
        -e 's/if (group > 0 \&\& p < num_partitions \&\&/if (false \&\& group > 0 \&\& p < num_partitions \&\&/' \
        -e 's/const size_type bad = twophase::first_bad_boundary(check);/const size_type bad = twophase::NO_BAD_BOUNDARY;/' "$cu"
    grep -q "TP_HAS_VALUES, false, false," "$cu" || { echo "variants.sh: checks not found in $cu" >&2; exit 1; }
  fi
  python3 "$repo/scripts/merge_lab/nvrtc_cubin.py" "$cu" "$out/${name}_nt${nt}_vt${vt}.cubin"
}
variant k_b3 "$keys" 384 23 3
variant k_b3nochk "$keys" 384 23 3 off
variant k_b4 "$keys" 384 23 4
variant k_s384x21b4 "$keys" 384 21 4
variant k_s384x21b4nochk "$keys" 384 21 4 off
variant k_s384x25b4 "$keys" 384 25 4
variant k_s512x21b3 "$keys" 512 21 3
variant k_s256x25b5 "$keys" 256 25 5
variant p_b2 "$pairs" 512 15 2
variant p_b2nochk "$pairs" 512 15 2 off
variant p_s384x17b3 "$pairs" 384 17 3
variant p_s384x15b3 "$pairs" 384 15 3
variant p_s256x19b4 "$pairs" 256 19 4
variant l_b3 "$wide" 256 19 3
variant l_b4 "$wide" 256 19 4
if [ -n "$base" ]; then
  cp "$base"/twophase_merge_unsigned_int_keys_less_nt384_vt23.cu-sm90.cubin "$out/k_base_nt384_vt23.cubin"
  cp "$base"/twophase_merge_unsigned_int_v4a4_less_nt512_vt15.cu-sm90.cubin "$out/p_base_nt512_vt15.cubin"
  cp "$base"/twophase_merge_unsigned_long_long_keys_less_nt256_vt19.cu-sm90.cubin "$out/l_base_nt256_vt19.cubin"
fi
cp "$repo/scripts/merge_lab/merge_lab.cpp" "$repo/scripts/merge_lab/run.sh" "$out/"
rm -rf "$src"
ls "$out"
