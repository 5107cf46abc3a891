//! The segmented sort: a block sort by (segment, key), then merge passes over only the segments that straddle each pair of runs.
// One program: the prelude (key_type, key_compare, value_type, TP_NT, TP_VT, TP_HAS_VALUES), then
// partition.cuh, serial.cuh, cta_merge.cuh, cta_mergesort.cuh and mergesort_blocksort.cu (for
// size_type, follow_previous_kernel, align16, CHECK_ORDER, the key image and the block sort's
// cta_sort), then this file.
//
// The keys are cut into tiles of NV = TP_NT * TP_VT, as in the mergesort. Level k of the merge
// passes merges pairs of runs of W = NV << k keys, but inside a pair only the one segment that
// straddles its midpoint needs merging (every other segment already lies wholly in one run,
// sorted): that segment's part of the pair, [lo, hi), is the pair's *straddle*, and the tiles it
// overlaps are the level's work. Everything else stays where it is. A tile is rewritten only at
// the levels that touch it, each time into the other of two buffers (the keys and the scratch),
// so tiles of one level's inputs may lie in different buffers: the plan records, per tile, the
// bit mask of the levels that touch it, and the tile's buffer before level k is the parity of its
// touches at levels >= k (1: the scratch). The block sort writes each tile where that parity puts
// it, so that every tile ends in the keys with no copy back. One segment of all the keys touches
// every tile at every level: the mergesort's passes. Short segments touch a tile or two a level.

namespace twophase {
// The kernels' parameter blocks, twins of the param_block! structs of
// crates/gpu/src/segmented_sort/launch.rs.
struct segsort_check_params {
  const size_type* starts;
  const size_type* ends;
  size_type num_segments;
  size_type count;
  unsigned* control;
  unsigned long long* status;
};

struct segsort_plan_params {
  const size_type* starts;
  const size_type* ends;
  size_type num_segments;
  size_type count;
  size_type num_tiles;
  unsigned long long* masks;
  size_type* straddles;
  unsigned* control;
  unsigned* lists;
  unsigned levels;
};

struct segsort_blocksort_params {
  key_type* keys;
  value_type* vals;
  key_type* scratch_keys;
  value_type* scratch_vals;
  const size_type* starts;
  const size_type* ends;
  size_type num_segments;
  size_type count;
  const unsigned long long* masks;
  const unsigned* control;
  unsigned long long* status;
};

struct segsort_partition_params {
  const key_type* keys;
  const key_type* scratch_keys;
  size_type count;
  size_type num_tiles;
  const unsigned long long* masks;
  const size_type* straddles;
  const unsigned* control;
  const unsigned* list;
  size_type* partitions;
  unsigned level;
};

struct segsort_verify_params {
  size_type count;
  const size_type* straddles;
  const unsigned* list;
  const size_type* partitions;
  unsigned* control;
  unsigned long long* status;
  unsigned level;
};

struct segsort_merge_params {
  key_type* keys;
  key_type* scratch_keys;
  value_type* vals;
  value_type* scratch_vals;
  size_type count;
  const unsigned long long* masks;
  const size_type* straddles;
  const unsigned* control;
  const unsigned* list;
  const size_type* partitions;
  unsigned long long* status;
  unsigned level;
};
}  // namespace twophase

// Status bit of a segmentation that is not valid (twophase_gpu STATUS_SEGMENTS_INVALID).
constexpr unsigned long long STATUS_SEGMENTS_INVALID = 32;

// The call's control words (zeroed by the host before the first kernel): whether the segments
// are invalid (then no kernel after the check touches the keys), then per level the number of
// tiles in its work list, then per level whether its partitions were found out of order (an
// inconsistent comparator: the level then leaves its straddles as they are).
enum control_word : unsigned { CONTROL_INVALID = 0, CONTROL_LIST_COUNTS = 1 };
__device__ __forceinline__ unsigned control_bad(unsigned levels_max, unsigned level) {
  return CONTROL_LIST_COUNTS + levels_max + level;
}
// Levels a sort can have: tiles are counted in 32 bits.
constexpr unsigned SEGSORT_MAX_LEVELS = 32;

__device__ __forceinline__ bool segments_invalid(const unsigned* control) {
  return *(volatile const unsigned*)(control + CONTROL_INVALID) != 0;
}

// The last segment whose start is <= pos (starts ascending), or -1 where every start is past it.
__device__ __forceinline__ long long segment_at(const size_type* starts, size_type num_segments, size_type pos) {
  size_type lo = 0, hi = num_segments;
  while (lo < hi) {
    const size_type mid = lo + (hi - lo) / 2;
    if (starts[mid] <= pos) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return (long long)lo - 1;
}

// One past the last key of segment i: its end, or with CSR starts alone (no `ends`) the next start
// (the last segment runs to `count`).
__device__ __forceinline__ size_type segment_end(const size_type* starts, const size_type* ends,
                                                 size_type num_segments, size_type count, size_type i) {
  if (ends != nullptr) return ends[i];
  return i + 1 < num_segments ? starts[i + 1] : count;
}

// The straddle of a pair of runs: the part [lo, hi) of the segment holding both the pair's last
// A key (mid - 1) and its first B key (mid), or an empty range (lo == hi) where no segment does.
struct straddle {
  size_type lo, hi, mid;
  __device__ __forceinline__ bool empty() const { return lo >= hi; }
};

__device__ __forceinline__ straddle find_straddle(const size_type* starts, const size_type* ends,
                                                  size_type num_segments, size_type count, size_type pair_begin,
                                                  size_type run) {
  straddle s = {0, 0, pair_begin + run};
  if (s.mid >= count) return s;
  const long long i = segment_at(starts, num_segments, s.mid);
  if (i < 0 || starts[i] == s.mid) return s;
  const size_type end = segment_end(starts, ends, num_segments, count, (size_type)i);
  if (end <= s.mid) return s;  // mid lies between segments
  const size_type pair_end = min(pair_begin + 2 * run, count);
  s.lo = max(starts[i], pair_begin);
  s.hi = min(end, pair_end);
  return s;
}

// Entries of the straddle table before level `level` (one entry, two words, per pair of runs).
__device__ __forceinline__ size_type straddle_offset(size_type num_tiles, unsigned level) {
  size_type offset = 0;
  for (unsigned k = 0; k < level; ++k) offset += (num_tiles + ((size_type)2 << k) - 1) >> (k + 1);
  return offset;
}

// Whether tile `tile` lies in the scratch (not the keys) before level `level`: the parity of the
// levels from `level` on that rewrite it.
__device__ __forceinline__ bool in_scratch(const unsigned long long* masks, size_type tile, unsigned level) {
  return (__popcll(masks[tile] >> level) & 1) != 0;
}

// Keys (or values) indexed by global position, each read from the buffer its tile lies in before
// `level`.
template <typename T>
struct located {
  const T* keys;
  const T* scratch;
  const unsigned long long* masks;
  unsigned level;
  __device__ __forceinline__ T operator[](size_type pos) const {
    constexpr size_type NV = (size_type)TP_NT * TP_VT;
    return (in_scratch(masks, pos / NV, level) ? scratch : keys)[pos];
  }
};

// `located` from a base position: index i reads position base + i.
template <typename T>
struct located_from {
  located<T> all;
  size_type base;
  __device__ __forceinline__ T operator[](size_type i) const { return all[base + i]; }
};

// A range [begin, end) of a level's inputs no longer than a tile: it spans at most two tiles,
// whose buffers are looked up once, so that each read is one load.
template <typename T>
struct span_reader {
  const T* first_tile;
  const T* second_tile;
  size_type split;
  __device__ __forceinline__ span_reader(const located<T>& all, size_type begin, size_type end) {
    constexpr size_type NV = (size_type)TP_NT * TP_VT;
    const size_type tile = begin / NV;
    split = (tile + 1) * NV;
    // Each tile's mask only where the range reaches it (an empty range may start past the last
    // tile).
    first_tile = end > begin && in_scratch(all.masks, tile, all.level) ? all.scratch : all.keys;
    second_tile = end > split && in_scratch(all.masks, tile + 1, all.level) ? all.scratch : all.keys;
  }
  __device__ __forceinline__ T operator[](size_type pos) const { return (pos < split ? first_tile : second_tile)[pos]; }
};

// Check the segments: CSR starts from 0, not decreasing, within the keys; or ranges in order,
// each start <= end <= the next start, within the keys. One thread a segment; any fault marks
// the call's segments invalid and raises STATUS_SEGMENTS_INVALID.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_check(const size_type* starts, const size_type* ends, size_type num_segments, size_type count,
                           unsigned* control, unsigned long long* status) {
  const size_type i = (size_type)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= num_segments) return;
  const size_type start = starts[i];
  bool bad = start > count;
  if (ends == nullptr) {
    bad |= i == 0 && start != 0;
    bad |= i + 1 < num_segments && starts[i + 1] < start;
  } else {
    const size_type end = ends[i];
    bad |= end < start || end > count;
    bad |= i + 1 < num_segments && starts[i + 1] < end;
  }
  if (bad) {
    atomicOr(control + CONTROL_INVALID, 1u);
    atomicOr(status, STATUS_SEGMENTS_INVALID);
  }
}

// The plan: one warp a tile, lane k (and k + 32) deciding whether level k touches the tile.
// Writes the tile's mask of touching levels, the straddle of each pair at its first tile, and
// appends the tile to the work list of each level that touches it.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_plan(const size_type* starts, const size_type* ends, size_type num_segments, size_type count,
                          size_type num_tiles, unsigned long long* masks, size_type* straddles, unsigned* control,
                          unsigned* lists, unsigned levels) {
  constexpr size_type NV = (size_type)TP_NT * TP_VT;
  static_assert(TP_PARTITION_NT % twophase::WARP_THREADS == 0, "one warp a tile");
  const size_type tile = ((size_type)blockIdx.x * blockDim.x + threadIdx.x) / twophase::WARP_THREADS;
  const unsigned lane = threadIdx.x % twophase::WARP_THREADS;
  if (tile >= num_tiles || segments_invalid(control)) return;  // whole warps
  const size_type t0 = tile * NV, t1 = min(t0 + NV, count);
  unsigned long long mask = 0;
  for (unsigned round = 0; round < SEGSORT_MAX_LEVELS; round += twophase::WARP_THREADS) {
    const unsigned level = round + lane;
    bool touched = false;
    if (level < levels) {
      const size_type run = NV << level;
      const size_type pair = t0 / (2 * run);
      const straddle s = find_straddle(starts, ends, num_segments, count, pair * 2 * run, run);
      touched = !s.empty() && s.lo < t1 && t0 < s.hi;
      if (t0 == pair * 2 * run) {
        size_type* entry = straddles + 2 * (straddle_offset(num_tiles, level) + pair);
        entry[0] = s.empty() ? 0 : s.lo;
        entry[1] = s.empty() ? 0 : s.hi;
      }
      if (touched) {
        const unsigned slot = atomicAdd(control + CONTROL_LIST_COUNTS + level, 1u);
        lists[(size_type)level * num_tiles + slot] = (unsigned)tile;
      }
    }
    mask |= (unsigned long long)__ballot_sync(0xffffffffu, touched) << round;
  }
  if (lane == 0) masks[tile] = mask;
}

// The composite key of the block sort's register sort: a key and the tile offset of its piece
// (the start of its segment within the tile, or, outside every segment, its own position), so
// that sorting by (piece, key) sorts each segment's part of a thread's keys and leaves keys
// outside segments in place.
struct piece_key {
  key_type key;
  unsigned piece;
};

struct piece_compare {
  static constexpr bool equivalents_identical = key_compare::equivalents_identical;
  static constexpr bool trusted_order = key_compare::trusted_order;
  __device__ __forceinline__ bool operator()(const piece_key& a, const piece_key& b) const {
    return a.piece != b.piece ? a.piece < b.piece : key_compare()(a.key, b.key);
  }
};

// Bits of a piece's start in its packed (start, end) entry of the block sort's piece table.
constexpr unsigned PIECE_SHIFT = 16;
constexpr unsigned PIECE_END_MASK = (1u << PIECE_SHIFT) - 1;

// Shared memory of a block-sort tile (dynamic: SegmentedSortTuning::blocksort_shared_bytes):
// NV + 1 keys, the piece table (each position's piece as its packed tile-local start and end),
// then with values the NV tile positions; later the NV values and positions of the
// permutation, as in the mergesort's block sort.
template <int NV>
struct segsort_smem {
  static_assert(NV <= (int)PIECE_END_MASK, "tile positions must fit a piece entry's 16-bit halves");
  static constexpr int KEY_BYTES = align16((NV + 1) * (int)sizeof(key_type));
  static constexpr int PIECE_BYTES = align16(NV * (int)sizeof(unsigned));
  static constexpr int SORT_BYTES = KEY_BYTES + PIECE_BYTES + (TP_HAS_VALUES ? NV * (int)sizeof(int) : 0);
  static constexpr int VALUE_BYTES = align16(NV * (int)sizeof(value_type));
  static constexpr int PERMUTE_BYTES = TP_HAS_VALUES ? VALUE_BYTES + NV * (int)sizeof(int) : 0;
  static constexpr int BYTES = SORT_BYTES > PERMUTE_BYTES ? SORT_BYTES : PERMUTE_BYTES;
};

// Sort one tile by (piece, key), keys in registers in thread order (thread t holds tile
// positions VT*t .. VT*t + VT - 1) with their tile positions in `ids`, `pieces_shared` holding
// each position's piece. A position's piece never changes as the keys move: each sorted run holds
// the keys of its own positions, whose pieces ascend. So a thread first sorts its VT keys by
// (piece, key) in registers; then log2(NT) levels merge pairs of runs, and in a pair only the
// piece that straddles its midpoint moves (every other piece lies wholly in one run, sorted):
// its part [lo, hi) is merged by the threads whose positions it overlaps, under the comparator
// alone, and the other threads keep their keys. Short segments make most levels a barrier and
// a store; a segment the size of the tile is the mergesort's block sort.
// With CHECK_WALKS each level checks that the merging threads' walks tiled their straddles
// exactly; where they did not, the level leaves every straddle as it was and raises
// STATUS_ORDER_INCONSISTENT.
template <int NT, int VT, bool checked, bool TRACK_IDS, bool CHECK_WALKS>
__device__ __forceinline__ void cta_segmented_sort(key_type (&keys)[VT], int (&ids)[VT], const piece_key (&loaded)[VT],
                                                   int count, key_type* keys_shared, const unsigned* pieces_shared,
                                                   int* ids_shared, const twophase::input_check& check) {
  const int tid = threadIdx.x;
  const int first = VT * tid;
  const int valid = checked ? max(0, min(VT, count - first)) : VT;
  __shared__ int warp_walk_starts[CHECK_WALKS ? NT / twophase::WARP_THREADS : 1];
  piece_key sorted[VT];
#pragma unroll
  for (int i = 0; i < VT; ++i) sorted[i] = loaded[i];
  if constexpr (!checked && !TRACK_IDS && key_compare::equivalents_identical) {
    twophase::network_sort<VT>(sorted, piece_compare());
  } else {
    twophase::serial_sort<VT>(sorted, ids, valid, piece_compare());
  }
#pragma unroll
  for (int i = 0; i < VT; ++i) keys[i] = sorted[i].key;

#pragma unroll 1
  for (int coop = 2; coop <= NT; coop *= 2) {
    __syncthreads();  // the previous level's reads of shared memory
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      keys_shared[first + i] = keys[i];
      if (TRACK_IDS) ids_shared[first + i] = ids[i];
    }
    __syncthreads();
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
    bool exact = true;
    if constexpr (CHECK_WALKS) {
      twophase::publish_walk_start(warp_walk_starts, walk_start);
      // Where this thread's walk ends after its own outputs (the serial merge may have run on
      // past them when the thread's first positions lie before the straddle).
      int walk_end = walk_start;
#pragma unroll
      for (int j = 0; j < VT; ++j) walk_end += j < outputs && sources[j] < mid;
      // The next thread merges the same straddle when this one's outputs stop short of hi.
      const bool has_next = merges && first + VT < hi;
      exact = twophase::walks_tile_exactly(warp_walk_starts, walk_start, walk_end, has_next);
      if (!exact && tid == 0) twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
    }
    int merged_ids[VT];
    if (TRACK_IDS) {
#pragma unroll
      for (int j = 0; j < VT; ++j) {
        if (j < outputs) merged_ids[j] = ids_shared[sources[j]];
      }
    }
    __syncthreads();  // every merge's reads of the straddles
    if (exact) {
#pragma unroll
      for (int j = 0; j < VT; ++j) {
        if (j < outputs) {
          keys_shared[out0 + j] = merged[j];
          if (TRACK_IDS) ids_shared[out0 + j] = merged_ids[j];
        }
      }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int pos = first + i;
      if (lo <= pos && pos < hi) {
        keys[i] = keys_shared[pos];
        if (TRACK_IDS) ids[i] = ids_shared[pos];
      }
    }
  }
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
  const bool to_scratch = (__popcll(mask) & 1) != 0;
  key_type* keys_out = to_scratch ? p.scratch_keys : p.keys;
  value_type* vals_out = to_scratch ? p.scratch_vals : p.vals;
  const key_image_out image_out = {mask == 0};

  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  unsigned* pieces_shared = reinterpret_cast<unsigned*>(smem + segsort_smem<NV>::KEY_BYTES);
  int* ids_shared = reinterpret_cast<int*>(smem + segsort_smem<NV>::KEY_BYTES + segsort_smem<NV>::PIECE_BYTES);
  twophase::load_tile<NT, VT, checked>(p.keys, tile_start, tile_cnt, p.keys, tile_start, tile_cnt, keys_shared, tid);

  // Each position's piece: the segment of this thread's first position by binary search, then a
  // walk over the starts up to its last position (a search again where empty segments pile up at
  // one start). Positions past the keys are pieces of their own.
  const size_type first = tile_start + (size_type)VT * tid;
  long long segment = segment_at(p.starts, p.num_segments, first);
  piece_key keys[VT];
  int ids[VT];
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
    keys[i].piece = (unsigned)piece_start;
    ids[i] = pos;
  }
  key_type sorted[VT];
  cta_segmented_sort<NT, VT, checked, TP_HAS_VALUES, CHECK_ORDER>(sorted, ids, keys, tile_cnt, keys_shared,
                                                                  pieces_shared, ids_shared, check);
#pragma unroll
  for (int i = 0; i < VT; ++i) sorted[i] = image_out(sorted[i]);
  twophase::store_through_shared<NT, VT, checked>(sorted, keys_shared, keys_out + tile_start, tile_cnt, tid);
  if (TP_HAS_VALUES) {
    value_type* vals_shared = reinterpret_cast<value_type*>(smem);
    int* permute_ids_shared = reinterpret_cast<int*>(smem + segsort_smem<NV>::VALUE_BYTES);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) vals_shared[idx] = p.vals[tile_start + idx];
    }
#pragma unroll
    for (int i = 0; i < VT; ++i) permute_ids_shared[VT * tid + i] = ids[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (!checked || idx < tile_cnt) vals_out[tile_start + idx] = vals_shared[permute_ids_shared[idx]];
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
  if (segments_invalid(control)) return;
  const twophase::segsort_blocksort_params p = {keys,  vals,         scratch_keys, scratch_vals, starts, ends,
                                                num_segments, count, masks,       control,      status};
  const twophase::input_check check = {status, nullptr, 0};
  if ((size_type)(blockIdx.x + 1) * NV <= count) {
    segsort_blocksort_tile<false>(p, smem, check);
  } else {
    segsort_blocksort_tile<true>(p, smem, check);
  }
}

// Phase 1 of level `level`: for every tile of its work list, the merge path of the tile's first
// output inside its pair's straddle (A = [lo, mid), B = [mid, hi)), as a global A position.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_partition(const key_type* keys, const key_type* scratch_keys, size_type count,
                               size_type num_tiles, const unsigned long long* masks, const size_type* straddles,
                               const unsigned* control, const unsigned* list, size_type* partitions,
                               unsigned level) {
  constexpr size_type NV = (size_type)TP_NT * TP_VT;
  if (segments_invalid(control)) return;
  const unsigned listed = control[CONTROL_LIST_COUNTS + level];
  const size_type run = NV << level;
  const located<key_type> all = {keys, scratch_keys, masks, level};
  for (size_type e = (size_type)blockIdx.x * blockDim.x + threadIdx.x; e < listed;
       e += (size_type)gridDim.x * blockDim.x) {
    const size_type tile = list[e];
    const size_type t0 = tile * NV;
    const size_type pair = t0 / (2 * run);
    const size_type lo = straddles[2 * pair], hi = straddles[2 * pair + 1], mid = pair * 2 * run + run;
    const size_type diag = max(t0, lo) - lo;
    const located_from<key_type> a = {all, lo}, b = {all, mid};
    partitions[tile] =
        lo + twophase::merge_path<twophase::bounds_lower, size_type>(a, mid - lo, b, hi - mid, diag, key_compare());
  }
}

// The A range [a0, a1) of the merged outputs of `tile` at a level: from the tile's partition to the
// next tile's, or to mid where the straddle ends in this tile.
struct tile_merge {
  size_type m0, m1, a0, a1, b0;
  __device__ __forceinline__ tile_merge(size_type tile, size_type count, const straddle& s,
                                        const size_type* partitions) {
    constexpr size_type NV = (size_type)TP_NT * TP_VT;
    const size_type t0 = tile * NV, t1 = min(t0 + NV, count);
    m0 = max(t0, s.lo);
    m1 = min(t1, s.hi);
    a0 = partitions[tile];
    a1 = m1 < s.hi ? partitions[tile + 1] : s.mid;
    b0 = s.mid + (m0 - s.lo) - (a0 - s.lo);
  }
  // Whether the boundaries tile this tile's outputs: A and B each advance, by no more than the
  // outputs, within their runs.
  __device__ __forceinline__ bool valid(const straddle& s) const {
    return s.lo <= a0 && a0 <= a1 && a1 <= s.mid && a1 - a0 <= m1 - m0 && s.mid <= b0 &&
           b0 + (m1 - m0) - (a1 - a0) <= s.hi;
  }
};

// The level's straddle of the pair `tile` belongs to.
__device__ __forceinline__ straddle tile_straddle(const size_type* straddles, size_type tile, unsigned level) {
  constexpr size_type NV = (size_type)TP_NT * TP_VT;
  const size_type run = NV << level;
  const size_type pair = tile * NV / (2 * run);
  return {straddles[2 * pair], straddles[2 * pair + 1], pair * 2 * run + run};
}

// With a comparator that is not trusted: the partitions of every listed tile checked against
// the next one's; where any pair is out of order the level is marked bad (its merge leaves every
// straddle as it is) and STATUS_ORDER_INCONSISTENT is raised.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_verify(size_type count, const size_type* straddles, const unsigned* list,
                            const size_type* partitions, unsigned* control, unsigned long long* status,
                            unsigned level) {
  if (segments_invalid(control)) return;
  const unsigned listed = control[CONTROL_LIST_COUNTS + level];
  for (size_type e = (size_type)blockIdx.x * blockDim.x + threadIdx.x; e < listed;
       e += (size_type)gridDim.x * blockDim.x) {
    const size_type tile = list[e];
    const straddle s = tile_straddle(straddles, tile, level);
    if (!tile_merge(tile, count, s, partitions).valid(s)) {
      atomicOr(control + control_bad(SEGSORT_MAX_LEVELS, level), 1u);
      atomicOr(status, (unsigned long long)twophase::STATUS_ORDER_INCONSISTENT);
    }
  }
}

// Phase 2 of level `level`: every tile of its work list rewritten into its other buffer: its
// outputs inside the straddle merged (NT threads, VT outputs each, through shared memory as the
// mergesort's pass tiles), the rest copied. The grid strides over the list.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_segsort_merge(key_type* keys, key_type* scratch_keys, value_type* vals, value_type* scratch_vals,
                           size_type count, const unsigned long long* masks, const size_type* straddles,
                           const unsigned* control, const unsigned* list, const size_type* partitions,
                           unsigned long long* status, unsigned level) {
  constexpr int NT = TP_NT;
  constexpr int VT = TP_VT;
  constexpr int NV = NT * VT;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int warp_walk_starts[CHECK_ORDER ? NT / twophase::WARP_THREADS : 1];
  if (segments_invalid(control)) return;
  const unsigned listed = control[CONTROL_LIST_COUNTS + level];
  const bool bad_level = CHECK_ORDER && control[control_bad(SEGSORT_MAX_LEVELS, level)] != 0;
  const twophase::input_check check = {status, nullptr, 0};
  const located<key_type> all_keys = {keys, scratch_keys, masks, level};
  const located<value_type> all_vals = {vals, scratch_vals, masks, level};
  key_type* keys_shared = reinterpret_cast<key_type*>(smem);
  const int tid = threadIdx.x;
  for (size_type e = blockIdx.x; e < listed; e += gridDim.x) {
    const size_type tile = list[e];
    const size_type t0 = tile * NV, t1 = min(t0 + NV, count);
    const unsigned long long mask = masks[tile];
    const bool from_scratch = (__popcll(mask >> level) & 1) != 0;
    key_type* out_keys = from_scratch ? keys : scratch_keys;
    value_type* out_vals = from_scratch ? vals : scratch_vals;
    const key_image_out image_out = {(mask >> level) == 1};
    const straddle s = tile_straddle(straddles, tile, level);
    const tile_merge m(tile, count, s, partitions);
    // The tile's outputs outside the straddle keep their keys (and values).
    const key_type* in_keys = from_scratch ? scratch_keys : keys;
    const value_type* in_vals = from_scratch ? scratch_vals : vals;
    for (size_type pos = t0 + tid; pos < t1; pos += NT) {
      if (pos < m.m0 || pos >= m.m1 || bad_level) {
        out_keys[pos] = image_out(in_keys[pos]);
        if (TP_HAS_VALUES) out_vals[pos] = in_vals[pos];
      }
    }
    if (bad_level) continue;
    const int tile_cnt = (int)(m.m1 - m.m0);
    const int a_cnt = (int)(m.a1 - m.a0);
    const int b_cnt = tile_cnt - a_cnt;
    __syncthreads();  // the previous tile's last reads of shared memory
    const span_reader<key_type> a_keys(all_keys, m.a0, m.a1), b_keys(all_keys, m.b0, m.b0 + b_cnt);
    if constexpr (TP_HAS_VALUES) {
      // Pairs: one key at a time (the registers of VT keys in flight cost the pairs tile half its
      // blocks: 128 registers a thread).
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (idx < tile_cnt) keys_shared[idx] = idx < a_cnt ? a_keys[m.a0 + idx] : b_keys[m.b0 + (idx - a_cnt)];
      }
    } else {
      // Every load issued before any store to shared memory, to keep VT loads in flight a thread.
      key_type loaded[VT];
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (idx < tile_cnt) loaded[i] = idx < a_cnt ? a_keys[m.a0 + idx] : b_keys[m.b0 + (idx - a_cnt)];
      }
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (idx < tile_cnt) keys_shared[idx] = loaded[i];
      }
    }
    __syncthreads();
    const int diag = min(VT * tid, tile_cnt);
    const int mp = twophase::merge_path<twophase::bounds_lower, int>(keys_shared, a_cnt, keys_shared + a_cnt, b_cnt,
                                                                      diag, key_compare());
    if (CHECK_ORDER) twophase::publish_walk_start(warp_walk_starts, mp);
    twophase::merge_range range = {mp, a_cnt, a_cnt + diag - mp, tile_cnt};
    key_type merged[VT];
    int sources[VT];
    if (range.total() > 0) {
      twophase::serial_merge<twophase::bounds_lower, VT, true>(keys_shared, range, key_compare(), merged, sources);
    }
    bool unmerged = false;
    if (CHECK_ORDER) {
      const bool has_next = VT * (tid + 1) < tile_cnt;
      unmerged = !twophase::walks_tile_exactly(warp_walk_starts, mp, range.a_begin, has_next);
    }
    if (unmerged) {
      // The walks did not tile the merge (an inconsistent comparator): A then B as they are.
      if (tid == 0) twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
      for (int idx = tid; idx < tile_cnt; idx += NT) {
        const size_type src = idx < a_cnt ? m.a0 + idx : m.b0 + (idx - a_cnt);
        out_keys[m.m0 + idx] = image_out(all_keys[src]);
        if (TP_HAS_VALUES) out_vals[m.m0 + idx] = all_vals[src];
      }
      continue;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      if (VT * tid + i < tile_cnt) keys_shared[VT * tid + i] = image_out(merged[i]);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < VT; ++i) {
      const int idx = NT * i + tid;
      if (idx < tile_cnt) out_keys[m.m0 + idx] = keys_shared[idx];
    }
    if (TP_HAS_VALUES) {
      int* sources_shared = reinterpret_cast<int*>(smem);
      const span_reader<value_type> a_vals(all_vals, m.a0, m.a1), b_vals(all_vals, m.b0, m.b0 + b_cnt);
      __syncthreads();
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        if (VT * tid + i < tile_cnt) sources_shared[VT * tid + i] = sources[i];
      }
      __syncthreads();
#pragma unroll
      for (int i = 0; i < VT; ++i) {
        const int idx = NT * i + tid;
        if (idx < tile_cnt) {
          const int src = sources_shared[idx];
          out_vals[m.m0 + idx] = src < a_cnt ? a_vals[m.a0 + src] : b_vals[m.b0 + (src - a_cnt)];
        }
      }
    }
  }
}
