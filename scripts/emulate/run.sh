#!/usr/bin/env bash
#! Run the shipped kernels (merge, sorted search, load balance, mergesort, segmented sort) on host threads under AddressSanitizer (no GPU): valid, unsorted and inconsistent-comparator inputs.
#
# Usage: scripts/emulate/run.sh [SEED ...]   (default seeds: 1 2; TWOPHASE_EMULATE_ONLY=<harness>
# runs one harness's programs: merge, search, lbs, textbook, blocksort, mergesort, segshort or
# segtile;
# TWOPHASE_EMULATE_PROGRAM=<text> only the programs whose name contains it;
# TWOPHASE_EMULATE_VARIANTS="<variant> ..." only those comparator variants, e.g. "clock top8")
# Needs NVRTC on LD_LIBRARY_PATH (the compile test dumps the generated program sources) and g++
# with C++20 (std::barrier). Each program is built as shipped and, where its comparator is
# `a < b`, with `a <= b`, with a hash of both keys and with an answer read off the clock (not
# strict weak orders, the last not even a function: only the
# permutation and the bounds are checked, not the order or the detection), and, where it is
# trusted (the mergesort's own orders compile no checks), as a user comparator (the checked
# kernels, with the same order), and where its equivalents are identical, as a user comparator
# on the keys' top 8 bits (`top8`: a strict weak order whose equivalent keys differ, so that only
# a stable sort gives std's answer). Prints one line per
# binary and exits non-zero on any failure or sanitizer report.
set -euo pipefail
cd "$(dirname "$0")/../.."
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2)
work=$(mktemp -d "${TMPDIR:-/tmp}/twophase-emulate.XXXXXXXX")
trap 'rm -rf "$work"' EXIT
# The programs: 4-byte keys alone and with 4-byte values, 8-byte keys; both search bounds; the
# load balance with 4- and 8-byte indices (4- and 8-byte values with the 4-byte ones); the
# textbook merges; the mergesort's block sort, keys alone and with values; the whole mergesort
# (four-way and eight-way passes) of 4-byte pairs and 8-byte keys; the segmented sort's
# check and short path, and its tile path (block sort and merge levels), each for 4-byte keys
# alone and with 4-byte values, 1-byte keys with 8-byte values, 8-byte keys.
programs=(
  "merge merge_b4_unsigned_int_keys_less_nt384_vt21"
  "merge merge_b3_unsigned_int_v4a4_less_nt384_vt17"
  "merge merge_b3_unsigned_long_long_keys_less_nt256_vt19"
  "search sorted_search_lower_unsigned_int_unsigned_int_keys_less_nt256_vt23"
  "search sorted_search_upper_unsigned_int_unsigned_int_keys_less_nt256_vt23"
  "lbs load_balance_unsigned_int_v4a4_none_nt256_vt23"
  "lbs load_balance_unsigned_int_v8a8_none_nt256_vt23"
  "lbs load_balance_unsigned_long_long_v8a8_none_nt256_vt23"
  "textbook merge_textbook_tpb8_unsigned_int_keys_less_nt128_vt8"
  "blocksort mergesort_r0_pass128r64_quad256r64_oct0r0_unsigned_int_keys_less_nt1024_vt45"
  "blocksort mergesort_r0_pass256r0_quad256r64_oct256r64_unsigned_int_v4a4_less_nt512_vt11"
  "mergesort mergesort_r0_pass256r0_quad256r64_oct256r64_unsigned_int_v4a4_less_nt512_vt11"
  "mergesort mergesort_r0_pass256r0_quad128r96_oct128r96_unsigned_long_long_keys_less_nt256_vt23"
  "segshort segmented_sort_unsigned_int_keys_less_nt128_vt15"
  "segshort segmented_sort_unsigned_int_v4a4_less_nt128_vt15"
  "segshort segmented_sort_unsigned_char_v8a8_less_nt128_vt15"
  "segshort segmented_sort_unsigned_long_long_keys_less_nt256_vt11"
  "segtile segmented_sort_unsigned_int_keys_less_nt128_vt15"
  "segtile segmented_sort_unsigned_int_v4a4_less_nt128_vt15"
  "segtile segmented_sort_unsigned_char_v8a8_less_nt128_vt15"
  "segtile segmented_sort_unsigned_long_long_keys_less_nt256_vt11"
)
only=${TWOPHASE_EMULATE_ONLY:-}
selected=()
for entry in "${programs[@]}"; do
  { [ -z "$only" ] || [ "${entry%% *}" = "$only" ]; } && [[ "${entry#* }" == *"${TWOPHASE_EMULATE_PROGRAM:-}"* ]] &&
    selected+=("$entry")
done
programs=("${selected[@]}")
for entry in "${programs[@]}"; do
  read -r _ name <<<"$entry"
  TWOPHASE_CUBIN_DUMP="$work/src" TWOPHASE_CUBIN_FILTER="$name" \
    cargo test --release -q -p twophase-gpu --test kernels_compile every_shipped >/dev/null 2>&1
  [ -f "$work/src/twophase_$name.cu" ] || { echo "no source for $name (is NVRTC on LD_LIBRARY_PATH?)"; exit 1; }
  # Host C++ has no dynamic shared memory and no PTX: each `extern __shared__` array gets its
  # kernel's exact size (the sorted search's tile's; the mergesort's block sort's, then the four-way tile's and the eight-way
  # tile's; in the segmented sort the block sort's, its own block sort's, the merge level's, the
  # four-way level's and the short kernel's), cp.async
  # copies become plain copies, and other inline PTX aborts if reached (only in kernels the
  # harnesses do not run).
  python3 - "$work/src/twophase_$name.cu" <<'PY'
import re
import sys
path = sys.argv[1]
text = open(path).read()
parts = text.split("extern __shared__ __align__(16) unsigned char smem[];")
sizes = {
    2: ["SEARCH_SHARED_BYTES"],
    4: ["blocksort_smem<NV>::BYTES", "quad_smem<NV, TP_VT>::BYTES", "oct_smem<NV, TP_VT>::BYTES"],
    6: ["blocksort_smem<NV>::BYTES", "segsort_smem<NV>::BYTES", "merge_smem<NV>::BYTES",
        "quad_smem<NV, TP_VT>::BYTES", "short_smem::BYTES"],
}
if len(parts) > 1:
    assert len(parts) in sizes, path
    names = sizes[len(parts)]
    text = "".join(p + (f"__shared__ __align__(16) unsigned char smem[{names[i]}];" if i < len(names) else "")
                   for i, p in enumerate(parts))
text = re.sub(r'asm volatile\("cp\.async\.ca\.shared\.global[^;]*;"[^;]*;', "*dst = *src; (void)shared_address;", text)
text = re.sub(r'asm volatile\("cp\.async\.commit_group;[^;]*;[^;]*;', "", text)
# The parameter blocks' field-offset asserts use EDG's __INTADDR__, which g++ lacks (sizes stay).
text = "".join(l for l in text.splitlines(True) if not l.startswith("static_assert(TP_FIELD_OFFSET("))
open(path, "w").write(text.replace("asm volatile(", "EMU_PTX("))
PY
done
status=0
for entry in "${programs[@]}"; do
  read -r harness name <<<"$entry"
  src="$work/src/twophase_$name.cu"
  variants=(less)
  grep -q '^return a < b;' "$src" && variants+=(le hash clock)
  grep -q 'trusted_order = true' "$src" && variants+=(user)
  grep -q 'equivalents_identical = true' "$src" && grep -q '^return a < b;' "$src" && variants+=(top8)
  for variant in "${variants[@]}"; do
    [ -z "${TWOPHASE_EMULATE_VARIANTS:-}" ] || [[ " $TWOPHASE_EMULATE_VARIANTS " == *" $variant "* ]] || continue
    kernel="$work/$name.$variant.cu"
    consistent=1
    case $variant in
      less) cp "$src" "$kernel" ;;
      user) sed -e 's/trusted_order = true/trusted_order = false/' "$src" >"$kernel" ;;
      top8) sed -e 's/trusted_order = true/trusted_order = false/' \
              -e 's/equivalents_identical = true/equivalents_identical = false/' \
              -e 's/^return a < b;/return (a >> 24) < (b >> 24);/' "$src" >"$kernel" ;;
      le) consistent=0; sed -e 's/trusted_order = true/trusted_order = false/' -e 's/^return a < b;/return a <= b;/' "$src" >"$kernel" ;;
      hash) consistent=0; sed -e 's/trusted_order = true/trusted_order = false/' \
              -e 's/^return a < b;/return (((a * 2654435761u) ^ (b * 40503u)) >> 13) \& 1;/' "$src" >"$kernel" ;;
      clock) consistent=0; sed -e 's/trusted_order = true/trusted_order = false/' \
              -e 's/^return a < b;/return ((unsigned long long)clock64() * 0x9E3779B97F4A7C15ull) >> 63;/' "$src" >"$kernel" ;;
    esac
    exe="$work/$name.$variant"
    g++ -std=c++20 -O1 -fsanitize=address -pthread -I scripts/emulate -DKERNEL_SOURCE="\"$kernel\"" \
      -DCHECK_DETECTION=$consistent -DCOMPARATOR_CONSISTENT=$consistent -x c++ \
      "scripts/emulate/${harness}_main.cpp" -o "$exe"
    for seed in "${seeds[@]}"; do
      if "$exe" "$seed" >"$exe.$seed.log" 2>&1; then
        echo "ok      $name ($variant, seed $seed): $(tail -1 "$exe.$seed.log")"
      else
        echo "FAILED  $name ($variant, seed $seed):"; tail -20 "$exe.$seed.log"; status=1
      fi
    done
  done
done
exit $status
