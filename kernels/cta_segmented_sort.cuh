//! The segmented sort's block sort: each tile sorted by (piece, key), merging only the piece across each pair of runs.
#pragma once
// Part of the segmented-sort program, after kernels/segmented_sort.cu (its parameter blocks,
// control words and segment searches).

// Whether the block sort's register sort orders equal keys by position: where they can be told
// apart (values ride along, or equivalents are not identical), so that it is stable.
constexpr bool SORT_BY_POSITION = TP_HAS_VALUES || !key_compare::equivalents_identical;

// Bits of a piece's start in its packed (start, end) entry of the block sort's piece table, and
// in a piece_key's word when sorting by position (the key's tile position below).
constexpr unsigned PIECE_SHIFT = 16;
constexpr unsigned PIECE_END_MASK = (1u << PIECE_SHIFT) - 1;
constexpr unsigned PIECE_POSITION_MASK = (1u << PIECE_SHIFT) - 1;

// The composite key of the block sort's register sort: a key and its `piece` word, the tile
// offset of its piece (the start of its segment within the tile, or, outside every segment, its
// own position), with SORT_BY_POSITION shifted up over the key's own tile position, so that
// sorting by (piece, key) sorts each segment's part of a thread's keys and leaves keys outside
// segments in place, and sorting by (piece, key, position) does so stably.
struct piece_key {
  key_type key;
  unsigned piece;
  __device__ __forceinline__ unsigned start() const { return SORT_BY_POSITION ? piece >> PIECE_SHIFT : piece; }
};

// Order by piece, then key.
struct piece_compare {
  static constexpr bool equivalents_identical = key_compare::equivalents_identical;
  static constexpr bool trusted_order = key_compare::trusted_order;
  __device__ __forceinline__ bool operator()(const piece_key& a, const piece_key& b) const {
    return a.start() != b.start() ? a.piece < b.piece : key_compare()(a.key, b.key);
  }
};

// Order by piece, then key, then position (SORT_BY_POSITION): a total order (no two keys share a
// position) whose every sort is the stable sort by (piece, key), so that an unstable sorting
// network serves.
struct piece_position_compare {
  static constexpr bool equivalents_identical = true;
  static constexpr bool trusted_order = key_compare::trusted_order;
  __device__ __forceinline__ bool operator()(const piece_key& a, const piece_key& b) const {
    if (a.start() != b.start()) return a.piece < b.piece;
    const key_compare comp;
    return comp(a.key, b.key) || (!comp(b.key, a.key) && a.piece < b.piece);
  }
};

// Shared memory of a block-sort tile (dynamic: SegmentedSortTuning::blocksort_shared_bytes):
// NV + 1 keys, the piece table (each position's piece as its packed tile-local start and end),
// then with values the NV tile positions (each sorted position's source) and the tile's NV
// values, copied in while the keys are sorted and gathered from there by source.
template <int NV>
struct segsort_smem {
  static_assert(NV <= (int)PIECE_END_MASK, "tile positions must fit a piece entry's 16-bit halves");
  static constexpr int KEY_BYTES = align16((NV + 1) * (int)sizeof(key_type));
  static constexpr int PIECE_BYTES = align16(NV * (int)sizeof(unsigned));
  static constexpr int ID_BYTES = TP_HAS_VALUES ? align16(NV * (int)sizeof(int)) : 0;
  static constexpr int SORT_BYTES = KEY_BYTES + PIECE_BYTES + ID_BYTES;
  static constexpr int VALUE_BYTES = TP_HAS_VALUES ? align16(NV * (int)sizeof(value_type)) : 0;
  static constexpr int BYTES = SORT_BYTES + VALUE_BYTES;
};

// Sort one tile by (piece, key) into shared memory: `loaded` holds this thread's keys (thread t
// holds tile positions VT*t .. VT*t + VT - 1) with their pieces, `pieces_shared` each position's
// piece; every read of the loaded tile in `keys_shared` has finished (the caller's barrier). On
// return (after a barrier) `keys_shared` holds the sorted tile in tile order and, with
// TRACK_IDS, `ids_shared` each position's source position. A position's piece never changes as
// the keys move: each sorted run holds the keys of its own positions, whose pieces ascend. So a
// thread first sorts its VT keys by (piece, key) in registers and stores them once; then
// log2(NT) levels merge pairs of runs in shared memory, and in a pair only the piece that
// straddles its midpoint moves (every other piece lies wholly in one run, sorted): its part
// [lo, hi) is merged by the threads whose positions it overlaps, under the comparator alone, and
// written back over itself. A level where no pair has a straddle is a single barrier; a segment
// the size of the tile is the mergesort's block sort.
// With CHECK_WALKS each level checks that the merging threads' walks tiled their straddles
// exactly; where they did not, the level leaves every straddle as it was and raises
// STATUS_ORDER_INCONSISTENT.
template <int NT, int VT, bool checked, bool TRACK_IDS, bool CHECK_WALKS>
__device__ __forceinline__ void cta_segmented_sort(const piece_key (&loaded)[VT], int count, key_type* keys_shared,
                                                   const unsigned* pieces_shared, int* ids_shared,
                                                   const twophase::input_check& check) {
  const int tid = threadIdx.x;
  const int first = VT * tid;
  const int valid = checked ? max(0, min(VT, count - first)) : VT;
  __shared__ int warp_walk_starts[CHECK_WALKS ? NT / twophase::WARP_THREADS : 1];
  piece_key sorted[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) sorted[i] = loaded[i];
  // A full tile by a sorting network (Batcher's: 59 compare-exchanges for 15 keys, where the
  // stable odd-even transposition takes 105), with SORT_BY_POSITION under the total order with
  // positions (each key's position rides in its piece word: no payload moves); a partial tile by
  // the transposition, whose count check keeps its padding in place.
  static_assert(!TRACK_IDS || SORT_BY_POSITION, "tracked positions ride in the piece words");
  if constexpr (!checked && !SORT_BY_POSITION) {
    twophase::network_sort<VT>(sorted, piece_compare());
  } else if constexpr (!checked) {
    twophase::network_sort<VT>(sorted, piece_position_compare());
  } else {
    int unused[VT] = {};
    twophase::serial_sort<VT>(sorted, unused, valid, piece_compare());
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    keys_shared[first + i] = sorted[i].key;
    if (TRACK_IDS) ids_shared[first + i] = (int)(sorted[i].piece & PIECE_POSITION_MASK);
  }
  // This thread's first position is the midpoint of its pair at the level where it begins the
  // pair's second run (coop twice its lowest set bit); its piece straddles there when it starts
  // before this thread's positions.
  const bool straddles_at_first = tid > 0 && first < count && (int)loaded[0].start() < first;

#pragma unroll 1
  for (int coop = 2; coop <= NT; coop *= 2) {
    // Barrier: the previous level's writes (or the register sorts' stores) are visible.
    const bool midpoint_here = (tid & (coop - 1)) == coop / 2;
    if (!__syncthreads_or(midpoint_here && straddles_at_first)) continue;
    const int run = VT * coop / 2;
    const int a_begin = VT * (tid & ~(coop - 1));
    const int mid = min(a_begin + run, count);
    const int b_end = min(a_begin + 2 * run, count);
    // The straddle: the piece of mid - 1 where it runs past mid, within the pair.
    int lo = 0, hi = 0;
    if (mid > 0 && mid < b_end) {
      const unsigned piece = pieces_shared[mid - 1];
      lo = max((int)(piece >> PIECE_SHIFT), a_begin);
      hi = min((int)(piece & PIECE_END_MASK), b_end);
    }
    const bool merges = mid < hi && first < hi && first + VT > lo;
    const int out0 = max(first, lo);
    const int outputs = merges ? min(first + VT, hi) - out0 : 0;
    key_type merged[VT];
    int sources[VT];
    int walk_start = 0;
    if (merges) {
      const int diag = out0 - lo;
      const int mp = twophase::merge_path<twophase::bounds_lower, int>(keys_shared + lo, mid - lo, keys_shared + mid,
                                                                        hi - mid, diag, key_compare());
      walk_start = lo + mp;
      twophase::merge_range range = {lo + mp, mid, mid + diag - mp, hi};
      twophase::serial_merge<twophase::bounds_lower, VT, true>(keys_shared, range, key_compare(), merged, sources);
    }
    int merged_ids[VT];
    if (TRACK_IDS) {
#pragma unroll
      for (int j = 0; j < VT; ++j) {
        if (j < outputs) merged_ids[j] = ids_shared[sources[j]];
      }
    }
    bool exact = true;
    if constexpr (CHECK_WALKS) {
      twophase::publish_walk_start(warp_walk_starts, walk_start);
      // Where this thread's walk ends after its own outputs (the serial merge may have run on
      // past them when the thread's first positions lie before the straddle).
      int walk_end = walk_start;
#pragma unroll
      for (int j = 0; j < VT; ++j) walk_end += j < outputs && sources[j] < mid;
      // The next thread merges the same straddle when this one's outputs stop short of hi.
      // Its final barrier also orders every merge's reads before the writes below.
      const bool has_next = merges && first + VT < hi;
      exact = twophase::walks_tile_exactly(warp_walk_starts, walk_start, walk_end, has_next);
      if (!exact && tid == 0) twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
    } else {
      __syncthreads();  // every merge's reads of the straddles
    }
    if (exact) {
#pragma unroll
      for (int j = 0; j < VT; ++j) {
        if (j < outputs) {
          keys_shared[out0 + j] = merged[j];
          if (TRACK_IDS) ids_shared[out0 + j] = merged_ids[j];
        }
      }
    }
  }
  __syncthreads();  // the last level's writes
}

template <bool checked>
__device__ __forceinline__ void segsort_blocksort_tile(const twophase::segsort_blocksort_params& p,
                                                       unsigned char* smem, const twophase::input_check& check) {
  constexpr int NT = TP_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  const int tid = threadIdx.x;
  const size_type tile = blockIdx.x;
  const size_type tile_start = tile * NV;
  const int tile_cnt = (int)min((size_type)NV, p.count - tile_start);
  const unsigned long long mask = p.masks[tile];
  const bool to_scratch = scratch_before(mask, 0);
  key_type* keys_out = to_scratch ? p.scratch_keys : p.keys;
  value_type* vals_out = to_scratch ? p.scratch_vals : p.vals;
  const key_image_out image_out = {touches(mask) == 0};

  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  unsigned* pieces_shared = reinterpret_cast<unsigned*>(smem + segsort_smem<NV>::KEY_BYTES);
  int* ids_shared = reinterpret_cast<int*>(smem + segsort_smem<NV>::KEY_BYTES + segsort_smem<NV>::PIECE_BYTES);
  value_type* vals_shared = reinterpret_cast<value_type*>(smem + segsort_smem<NV>::SORT_BYTES);
  // The tile's values on their way to shared memory (where cp.async can take them) while the keys
  // are sorted, instead of one load latency after the sort.
  if constexpr (TP_HAS_VALUES && copies_async<value_type>()) {
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) segsort_copy_async(vals_shared + idx, p.vals + tile_start + idx);
    }
  }
  twophase::load_tile<NT, VT, checked>(p.keys, tile_start, tile_cnt, p.keys, tile_start, tile_cnt, keys_shared, tid);

  // Each position's piece: the segment of this thread's first position by binary search, then a
  // walk over the starts up to its last position (a search again where empty segments pile up at
  // one start). Positions past the keys are pieces of their own.
  const size_type first = tile_start + (size_type)VT * tid;
  long long segment = segment_at(p.starts, p.num_segments, first);
  piece_key keys[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int pos = VT * tid + i;
    const size_type global = first + i;
    if (pos < tile_cnt && segment + 1 < (long long)p.num_segments && p.starts[segment + 1] <= global) {
      ++segment;
      if (segment + 1 < (long long)p.num_segments && p.starts[segment + 1] <= global) {
        segment = segment_at(p.starts, p.num_segments, global);
      }
    }
    int piece_start = pos, piece_end = pos + 1;
    if (segment >= 0 && pos < tile_cnt) {
      const size_type end = segment_end(p.starts, p.ends, p.num_segments, p.count, (size_type)segment);
      if (global < end) {
        piece_start = (int)(max(p.starts[segment], tile_start) - tile_start);
        piece_end = (int)(min(end, tile_start + tile_cnt) - tile_start);
      }
    }
    pieces_shared[pos] = (unsigned)piece_start << PIECE_SHIFT | (unsigned)piece_end;
    keys[i].key = twophase_key_image(keys_shared[checked ? min(pos, tile_cnt - 1) : pos]);
    keys[i].piece = SORT_BY_POSITION ? (unsigned)piece_start << PIECE_SHIFT | (unsigned)pos : (unsigned)piece_start;
  }
  // Every read of the loaded tile (a padding position of the last tile reads its last key)
  // before the register sorts overwrite it.
  if (checked) __syncthreads();
  cta_segmented_sort<NT, VT, checked, TP_HAS_VALUES, CHECK_ORDER>(keys, tile_cnt, keys_shared, pieces_shared,
                                                                  ids_shared, check);
  // The sorted tile is in shared memory in tile order: store it straight out, coalesced.
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    const int idx = NT * i + tid;
    if (!checked || idx < tile_cnt) keys_out[tile_start + idx] = image_out(keys_shared[idx]);
  }
  if (TP_HAS_VALUES) {
    if constexpr (!copies_async<value_type>()) {
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (!checked || idx < tile_cnt) vals_shared[idx] = p.vals[tile_start + idx];
      }
    }
    segsort_copy_wait();
    __syncthreads();  // every thread's values in shared memory
    // Each sorted position's value, gathered by its source (the sort's last barrier made the
    // sources visible), coalesced.
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) vals_out[tile_start + idx] = vals_shared[ids_shared[idx]];
    }
  }
}

// Phase 2 of the block sort: tile t sorted by (piece, key) from the keys into the buffer its
// parity of touches names (in place when that is the keys).
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_segsort_blocksort(key_type* keys, value_type* vals, key_type* scratch_keys, value_type* scratch_vals,
                               const size_type* starts, const size_type* ends, size_type num_segments,
                               size_type count, const unsigned long long* masks, const unsigned* control,
                               unsigned long long* status) {
  constexpr int NV = TP_NT * TP_VT;
  extern __shared__ __align__(16) unsigned char smem[];
  follow_previous_launch();
  if (tile_path_off(control)) return;
  const twophase::segsort_blocksort_params p = {keys,  vals,         scratch_keys, scratch_vals, starts, ends,
                                                num_segments, count, masks,       control,      status};
  const twophase::input_check check = {status, nullptr, 0};
  if ((size_type)(blockIdx.x + 1) * NV <= count) {
    segsort_blocksort_tile<false>(p, smem, check);
  } else {
    segsort_blocksort_tile<true>(p, smem, check);
  }
}
