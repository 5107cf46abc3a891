//! The segmented sort's level partitions: each listed tile's merge path in its pair's straddle, and their check.
// Part of the segmented-sort program, after kernels/segmented_sort.cu and cta_segmented_sort.cuh.

// The level's straddle of the pair `tile` belongs to.
__device__ __forceinline__ straddle tile_straddle(const size_type* straddles, size_type tile, unsigned level) {
  constexpr size_type NV = (size_type)TP_NT * TP_VT;
  const size_type run = NV << level;
  const size_type pair = tile >> (level + 1);  // a pair of runs is 2^(level + 1) tiles
  return {straddles[2 * pair], straddles[2 * pair + 1], pair * 2 * run + run};
}

// The merge path of output `at` (s.lo <= at < s.hi) of the straddle `s` at level `level` (A = [lo,
// mid), B = [mid, hi), each key read from the buffer its tile's mask names), as a global A position,
// searched by a group of `lanes` lanes (twophase::first_untaken; one lane: a binary search).
__device__ __forceinline__ size_type straddle_partition(const key_type* keys, const key_type* scratch_keys,
                                                        const unsigned long long* masks, unsigned level,
                                                        const straddle& s, size_type at, int lanes) {
  const located<key_type> all = {keys, scratch_keys, masks, level};
  const located_from<key_type> a = {all, s.lo}, b = {all, s.mid};
  const size_type diag = at - s.lo, a_count = s.mid - s.lo, b_count = s.hi - s.mid;
  const size_type begin = diag > b_count ? diag - b_count : 0, end = diag < a_count ? diag : a_count;
  return s.lo + twophase::first_untaken(begin, end, lanes, [&](size_type mid) {
           return twophase::takes_a<twophase::bounds_lower>(a[mid], b[diag - 1 - mid], key_compare());
         });
}

// Every tile of level `level`'s work list with its pair's straddle, `visit(tile, straddle)`, the
// grid's threads striding over the list (after the launch before, where the tile path is on).
template <typename visit_t>
__device__ __forceinline__ void for_each_listed_tile(const unsigned* control, const unsigned* list,
                                                     const size_type* straddles, unsigned level, visit_t visit) {
  follow_previous_launch();
  if (tile_path_off(control)) return;
  const unsigned listed = control[CONTROL_LIST_COUNTS + level];
  for (size_type e = (size_type)blockIdx.x * blockDim.x + threadIdx.x; e < listed;
       e += (size_type)gridDim.x * blockDim.x) {
    const size_type tile = list[e];
    visit(tile, tile_straddle(straddles, tile, level));
  }
}

// Phase 1 of level `level`: for every tile of its work list, the merge path of the tile's first
// output inside its pair's straddle, as a global A position.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_partition(const key_type* keys, const key_type* scratch_keys, size_type count,
                               size_type num_tiles, const unsigned long long* masks, const size_type* straddles,
                               const unsigned* control, const unsigned* list, size_type* partitions,
                               unsigned level) {
  constexpr size_type NV = (size_type)TP_NT * TP_VT;
  for_each_listed_tile(control, list, straddles, level, [&](size_type tile, const straddle& s) {
    partitions[tile] = straddle_partition(keys, scratch_keys, masks, level, s, max(tile * NV, s.lo), 1);
  });
}

// The A range [a0, a1) of the merged outputs of `tile` at a level: from the tile's partition to the
// next tile's, or to mid where the straddle ends in this tile. `partition_of(t)` gives tile t's.
struct tile_merge {
  size_type m0, m1, a0, a1, b0;
  template <typename partitions_t>
  __device__ __forceinline__ tile_merge(size_type tile, size_type count, const straddle& s,
                                        const partitions_t& partition_of) {
    constexpr size_type NV = (size_type)TP_NT * TP_VT;
    const size_type t0 = tile * NV, t1 = min(t0 + NV, count);
    m0 = max(t0, s.lo);
    m1 = min(t1, s.hi);
    a0 = partition_of(tile);
    a1 = m1 < s.hi ? partition_of(tile + 1) : s.mid;
    b0 = s.mid + (m0 - s.lo) - (a0 - s.lo);
  }
  // Whether the boundaries tile this tile's outputs: A and B each advance, by no more than the
  // outputs, within their runs.
  __device__ __forceinline__ bool valid(const straddle& s) const {
    return s.lo <= a0 && a0 <= a1 && a1 <= s.mid && a1 - a0 <= m1 - m0 && s.mid <= b0 &&
           b0 + (m1 - m0) - (a1 - a0) <= s.hi;
  }
};

// The partitions a level's partition launch stored, as tile_merge reads them.
struct stored_partitions {
  const size_type* partitions;
  __device__ __forceinline__ size_type operator()(size_type tile) const { return partitions[tile]; }
};

// With a comparator that is not trusted: the partitions of every listed tile checked against
// the next one's; where any pair is out of order the level is marked bad (its merge leaves every
// straddle as it is) and STATUS_ORDER_INCONSISTENT is raised.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_verify(size_type count, const size_type* straddles, const unsigned* list,
                            const size_type* partitions, unsigned* control, unsigned long long* status,
                            unsigned level) {
  for_each_listed_tile(control, list, straddles, level, [&](size_type tile, const straddle& s) {
    if (!tile_merge(tile, count, s, stored_partitions{partitions}).valid(s)) {
      atomicOr(control + control_bad(SEGSORT_MAX_LEVELS, level), 1u);
      atomicOr(status, (unsigned long long)twophase::STATUS_ORDER_INCONSISTENT);
    }
  });
}
