//! The two-phase merge kernels: merge path partitions at every tile's diagonal, then one tile per CTA (and a streamed merge's window cuts, and strided samples for cuts across devices).
// The host prepends a prelude defining key_type, key_compare, value_type, TP_NT, TP_VT,
// TP_HAS_VALUES and TP_PARTITION_NT, and TP_MIN_BLOCKS (MergeTuning::blocks_per_sm), then partition.cuh, serial.cuh and cta_merge.cuh.

using twophase::size_type;

namespace twophase {
// The kernels' parameter blocks, twins of MergePartitionParams and MergeTileParams in
// crates/gpu/src/merge/mod.rs (the generated program static_asserts
// the layouts equal and that each kernel's parameters are these fields in order).
typedef partition_params<merge_inputs<key_type>> merge_partition_params;

struct merge_tile_fields : merge_inputs<key_type> {
  const size_type* partitions;
  key_type* out;
  const value_type* a_vals;
  const value_type* b_vals;
  value_type* out_vals;
};
typedef checked_params<merge_tile_fields> merge_tile_params;
}  // namespace twophase

// Phase 1: partitions[p] = merge path (A elements before) at output diagonal min(p * spacing, total),
// searched once each by groups of `lanes` lanes (twophase::search_partitions), which checks every
// adjacent pair as stored: a pair out of order (unsorted inputs, or a comparator that is not a
// strict weak order) is reported to the repair slot, and the tile kernel repairs the path.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_merge_partition(const key_type* __restrict__ a, size_type a_count, const key_type* __restrict__ b,
                             size_type b_count, size_type spacing, size_type num_partitions,
                             size_type* __restrict__ partitions, size_type lanes, unsigned* arrivals,
                             unsigned long long* status, unsigned long long* repair, unsigned generation) {
  twophase::pdl_launch_dependents();  // the tile kernel's blocks wait for this grid's partitions
  const twophase::input_check check = {status, repair, generation};
  twophase::merge_partitions<TP_PARTITION_NT>(a, a_count, b, b_count, spacing, num_partitions, partitions, (int)lanes,
                                              arrivals, check, key_compare());
}

// Phase 2: tile t produces outputs [t * NV, min((t + 1) * NV, total)), between its two boundaries
// repaired past the first bad one (twophase::repaired_boundary), so that the tiles always cover
// both inputs exactly once.
extern "C" __global__ void __launch_bounds__(TP_NT, TP_MIN_BLOCKS)
    twophase_merge_tile(const key_type* __restrict__ a, size_type a_count, const key_type* __restrict__ b,
                        size_type b_count, const size_type* __restrict__ partitions, key_type* __restrict__ out,
                        const value_type* __restrict__ a_vals, const value_type* __restrict__ b_vals,
                        value_type* __restrict__ out_vals, unsigned long long* status, unsigned long long* repair,
                        unsigned generation) {
  constexpr int NT = TP_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  constexpr int KEY_BYTES = (NV + 1) * (int)sizeof(key_type);
  constexpr int INDEX_BYTES = NV * (int)sizeof(int);
  constexpr int SMEM_BYTES = KEY_BYTES > INDEX_BYTES ? KEY_BYTES : INDEX_BYTES;
  static_assert(SMEM_BYTES <= 48 * 1024, "tile too large for static shared memory");
  __shared__ __align__(16) unsigned char smem[SMEM_BYTES];

  twophase::pdl_wait();  // the partition kernel's partitions
  const twophase::input_check check = {status, repair, generation};
  const size_type tile = blockIdx.x;
  const size_type total = a_count + b_count;
  const size_type diag0 = tile * NV;
  const size_type diag1 = diag0 + NV < total ? diag0 + NV : total;
  size_type a0 = partitions[tile];
  size_type a1 = partitions[tile + 1];
  const size_type bad = twophase::first_bad_boundary(check);
  if (bad != twophase::NO_BAD_BOUNDARY) {
    const size_type bad_path = partitions[bad], bad_diag = min(bad * NV, total);
    a0 = twophase::repaired_boundary(tile, a0, diag0, bad, bad_path, bad_diag, a_count);
    a1 = twophase::repaired_boundary(tile + 1, a1, diag1, bad, bad_path, bad_diag, a_count);
  }
  a1 = twophase::clamped_tile_end(a0, a1, diag1 - diag0);
  const size_type b0 = diag0 - a0;
  const int a_cnt = (int)(a1 - a0);
  const int tile_cnt = (int)(diag1 - diag0);
  if (tile_cnt == NV) {
    twophase::cta_merge<NT, VT, false, TP_HAS_VALUES, true, true, twophase::STATUS_ORDER_INCONSISTENT>(
        a, b, out, a_vals, b_vals, out_vals, a0, b0, diag0, a_cnt, tile_cnt, smem, check, key_compare());
  } else {
    twophase::cta_merge<NT, VT, true, TP_HAS_VALUES, true, true, twophase::STATUS_ORDER_INCONSISTENT>(
        a, b, out, a_vals, b_vals, out_vals, a0, b0, diag0, a_cnt, tile_cnt, smem, check, key_compare());
  }
}

namespace twophase {
// The parameter block of twophase_merge_window_cuts, twin of MergeWindowCutsParams in
// crates/gpu/src/merge/window.rs.
struct merge_window_cuts_params {
  const key_type* keys;
  size_type count;
  const key_type* needles;
  size_type needle_count;
  size_type needles_first;
  size_type* cuts;
};
}  // namespace twophase

// The windows of a merge streamed behind a transfer (crates/gpu/src/sharded/stream.rs): cuts[j] =
// how many of the sorted keys[0, count) come before needles[j] in the stable merge of the two
// runs, the needles' run first (`needles_first`: the keys strictly less) or second (the keys not
// greater). One thread a needle, a binary search; whatever the comparator answers, every cut lies
// in [0, count] (the host makes them a staircase).
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_merge_window_cuts(const key_type* __restrict__ keys, size_type count,
                               const key_type* __restrict__ needles, size_type needle_count,
                               size_type needles_first, size_type* __restrict__ cuts) {
  const size_type j = (size_type)blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= needle_count) return;
  const key_type needle = needles[j];
  key_compare comp = key_compare();
  size_type begin = 0, end = count;
  while (begin < end) {
    const size_type mid = begin + (end - begin) / 2;
    const bool before = needles_first != 0 ? comp(keys[mid], needle) : !comp(needle, keys[mid]);
    if (before) {
      begin = mid + 1;
    } else {
      end = mid;
    }
  }
  cuts[j] = begin;
}

namespace twophase {
// The parameter block of twophase_merge_gather, twin of MergeGatherParams in
// crates/gpu/src/merge/window.rs.
struct merge_gather_params {
  const key_type* keys;
  size_type first;
  size_type step;
  size_type count;
  key_type* out;
};
}  // namespace twophase

// Every step-th key from `first` side by side: out[j] = keys[first + j * step] for j < count (the
// samples that bound a cut across devices, crates/gpu/src/sharded/cuts.rs: one contiguous copy to
// the host afterwards instead of a strided copy's row a key). One thread a sample.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_merge_gather(const key_type* __restrict__ keys, size_type first, size_type step, size_type count,
                          key_type* __restrict__ out) {
  const size_type j = (size_type)blockIdx.x * blockDim.x + threadIdx.x;
  if (j < count) out[j] = keys[first + j * step];
}
