//! Phase 1 on the GPU: merge path search, the CUDA twin of crates/partition (same names, same tie rule).
#pragma once

namespace twophase {

// Global sizes and offsets are 64-bit end to end (inputs past 2^31 elements must work).
typedef unsigned long long size_type;

// Tie policy of a merge path search. Lower: on ties take from A first (the stable merge rule).
// Upper: on ties take from B first.
enum bounds_t { bounds_lower, bounds_upper };

// Whether the merge under policy `bounds` emits a_key before b_key (twophase_partition::takes_a).
template <bounds_t bounds, typename key_t, typename comp_t>
__device__ __forceinline__ bool takes_a(const key_t& a_key, const key_t& b_key, comp_t comp) {
  return bounds == bounds_upper ? comp(a_key, b_key) : !comp(b_key, a_key);
}

// Merge path: binary search on cross-diagonal `diag` of the merge of a[0, a_count) and
// b[0, b_count) for the number of A elements among the first `diag` outputs
// (twophase_partition::merge_path). `int_t` is size_type for global arrays, int inside a tile.
template <bounds_t bounds, typename int_t, typename a_it, typename b_it, typename comp_t>
__device__ __forceinline__ int_t merge_path(a_it a, int_t a_count, b_it b, int_t b_count, int_t diag,
                                            comp_t comp) {
  int_t begin = diag > b_count ? diag - b_count : 0;
  int_t end = diag < a_count ? diag : a_count;
  while (begin < end) {
    int_t mid = begin + (end - begin) / 2;
    if (takes_a<bounds>(a[mid], b[diag - 1 - mid], comp)) {
      begin = mid + 1;
    } else {
      end = mid;
    }
  }
  return begin;
}

// The slices of A and B that produce one contiguous piece of a merge's output
// (twophase_partition::MergeRange), in 32-bit tile-local indices: B follows A in one buffer.
struct merge_range {
  int a_begin, a_end, b_begin, b_end;
  __device__ __forceinline__ int a_count() const { return a_end - a_begin; }
  __device__ __forceinline__ int b_count() const { return b_end - b_begin; }
  __device__ __forceinline__ int total() const { return a_count() + b_count(); }
  __device__ __forceinline__ bool a_valid() const { return a_begin < a_end; }
  __device__ __forceinline__ bool b_valid() const { return b_begin < b_end; }
};

}  // namespace twophase
