//! The segmented sort: a block sort by (segment, key), then merge passes over only the segments that straddle each pair of runs.
// One program: the prelude (key_type, key_compare, value_type, TP_NT, TP_VT, TP_HAS_VALUES), then
// partition.cuh, serial.cuh, cta_merge.cuh, cta_mergesort.cuh and mergesort_blocksort.cu (for
// size_type, follow_previous_kernel, align16, CHECK_ORDER, the key image and the block sort's
// cta_sort), then this file, segmented_sort_plan.cu (the plan), cta_segmented_sort.cuh (the block
// sort), segmented_sort_levels.cu (the merge levels), the mergesort's four-way cut search and tile
// (mergesort_partition.cuh, mergesort_quad_partition.cuh, cta_quad_merge.cuh) with
// segmented_sort_four_way.cu (the four-way levels), and segmented_sort_short.cu (the short path).
// The tuning's defines give TP_SHORT_MAX, TP_SHORT_NT, TP_SHORT_KEY_BYTES, TP_SHORT_VALUE_BYTES and
// TP_QUAD_NT (TP_NT: the four-way tile is a tile of the levels).
//
// Where every segment is short (at most TP_SHORT_MAX keys) one kernel sorts them all, a thread a
// segment (segmented_sort_short.cu), and the kernels below return at once (tile_path_off).
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
// Where four runs (a pair of pairs) lie wholly in one segment, their tiles merge both levels in
// one four-way pass, as the mergesort's four-way passes do (segmented_sort_plan.cu).

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
  unsigned four_way;
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
  unsigned own_partitions;
};

struct segsort_four_way_params {
  key_type* keys;
  key_type* scratch_keys;
  value_type* vals;
  value_type* scratch_vals;
  size_type count;
  const unsigned long long* masks;
  const unsigned* control;
  const unsigned* list;
  const size_type* partitions;
  size_type* cuts;
  unsigned long long* status;
  unsigned level;
};
}  // namespace twophase

// Status bit of a segmentation that is not valid (twophase_gpu STATUS_SEGMENTS_INVALID).
constexpr unsigned long long STATUS_SEGMENTS_INVALID = 32;

// The call's control words (zeroed by the host before the first kernel): the call's verdict
// (CONTROL_INVALID: INVALID_BIT where the segments are invalid, then no kernel after the check
// touches the keys; SHORT_TAKEN_BIT once the short kernel took the call, then the tile path's
// kernels return at once), then per level the number of tiles in its work list, then per level
// whether its partitions were found out of order (an inconsistent comparator: the level then
// leaves its straddles as they are), then whether some segment is longer than TP_SHORT_MAX.
enum control_word : unsigned { CONTROL_INVALID = 0, CONTROL_LIST_COUNTS = 1 };
enum control_verdict : unsigned { INVALID_BIT = 1, SHORT_TAKEN_BIT = 2 };
__device__ __forceinline__ unsigned control_bad(unsigned levels_max, unsigned level) {
  return CONTROL_LIST_COUNTS + levels_max + level;
}
// Levels a sort can have: tiles are counted in 32 bits.
constexpr unsigned SEGSORT_MAX_LEVELS = 32;
// The word that says some segment is longer than TP_SHORT_MAX, after the levels' list counts
// and bad flags; then per level the number of tiles in its four-way list.
constexpr unsigned CONTROL_LONG_SEGMENT = CONTROL_LIST_COUNTS + 2 * SEGSORT_MAX_LEVELS;
constexpr unsigned CONTROL_FOUR_WAY_COUNTS = CONTROL_LONG_SEGMENT + 1;

__device__ __forceinline__ unsigned control_verdict_of(const unsigned* control) {
  return *(volatile const unsigned*)(control + CONTROL_INVALID);
}

__device__ __forceinline__ bool segments_invalid(const unsigned* control) {
  return (control_verdict_of(control) & INVALID_BIT) != 0;
}

// Whether the program's types take the short path (kernels/segmented_sort_short.cu: a segment's
// keys in one thread's registers, the values in shared memory): keys of at most
// TP_SHORT_KEY_BYTES, values of at most TP_SHORT_VALUE_BYTES (the host's `short_path_types`).
constexpr bool SHORT_PATH_TYPES =
    sizeof(key_type) <= TP_SHORT_KEY_BYTES && (!TP_HAS_VALUES || sizeof(value_type) <= TP_SHORT_VALUE_BYTES);

// Whether the short kernel sorts this call: valid segments, none longer than TP_SHORT_MAX, and
// types it takes. Decided on the device from the check's words, so that the call needs no
// read-back: the host launches both paths; the short kernel reads this first and, taking the
// call, sets SHORT_TAKEN_BIT for the tile path's kernels.
__device__ __forceinline__ bool short_path_taken(const unsigned* control) {
  return SHORT_PATH_TYPES && !segments_invalid(control) &&
         *(volatile const unsigned*)(control + CONTROL_LONG_SEGMENT) == 0;
}

// Whether the tile path (plan, block sort, merge levels) leaves the keys alone: the segments are
// invalid, or the short kernel took the call. One load of one word, as each of their blocks
// reads it first.
__device__ __forceinline__ bool tile_path_off(const unsigned* control) { return control_verdict_of(control) != 0; }

// Programmatic dependent launch (sm_90+, sorts below SegmentedSortTuning::pdl_below_keys): every
// kernel after the check is launched as a programmatic dependent of the one before, so that its
// blocks are scheduled while that kernel's last blocks run. Each kernel calls this before it
// touches global memory: it waits for the kernel before to complete, its writes visible (and so
// for every kernel before that one, which each waited alike), then lets its own dependent be
// scheduled. Both are no-ops in a kernel launched normally.
__device__ __forceinline__ void follow_previous_launch() {
  twophase::pdl_wait();
  twophase::pdl_launch_dependents();
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

// Pairs of runs at level `level`: a pair is 2^(level + 1) tiles, the last one maybe partial.
__device__ __forceinline__ size_type pairs_at_level(size_type num_tiles, unsigned level) {
  return (num_tiles + ((size_type)2 << level) - 1) >> (level + 1);
}

// Entries of the straddle table before level `level` (one entry, two words, per pair of runs).
__device__ __forceinline__ size_type straddle_offset(size_type num_tiles, unsigned level) {
  size_type offset = 0;
  for (unsigned k = 0; k < level; ++k) offset += pairs_at_level(num_tiles, k);
  return offset;
}

// A tile's mask: bit k (k < SEGSORT_MAX_LEVELS) where level k touches the tile, and bit
// SEGSORT_MAX_LEVELS + k where level k merges it four-way, levels k and k + 1 in one pass (its
// bit k + 1 then clear: one read and write of the tile for both).
__device__ __forceinline__ unsigned long long touches(unsigned long long mask) {
  return mask & ((1ull << SEGSORT_MAX_LEVELS) - 1);
}
__device__ __forceinline__ bool four_way_at(unsigned long long mask, unsigned level) {
  return ((mask >> (SEGSORT_MAX_LEVELS + level)) & 1) != 0;
}

// Whether a tile of mask `mask` lies in the scratch before level `level`: the parity of its
// touches from it on. Its level-`level` merge reads it there and writes the other buffer.
__device__ __forceinline__ bool scratch_before(unsigned long long mask, unsigned level) {
  return (__popcll(touches(mask) >> level) & 1) != 0;
}
// Whether level `level` is the last to touch a tile of mask `mask`: its merge stores the keys
// mapped back from their image.
__device__ __forceinline__ bool last_touch(unsigned long long mask, unsigned level) {
  return (touches(mask) >> level) == 1;
}

// Whether tile `tile` lies in the scratch before level `level`.
__device__ __forceinline__ bool in_scratch(const unsigned long long* masks, size_type tile, unsigned level) {
  return scratch_before(masks[tile], level);
}

// Keys (or values) by global position, each read from the buffer its tile lies in before `level`.
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

// Where a range [begin, end) of a level's inputs no longer than a tile lies: it spans at most two
// tiles, whose buffers are looked up once (for the keys and the values alike). `split` is the
// offset from `begin` where the second tile starts.
struct span_place {
  bool first_scratch, second_scratch;
  int split;
  __device__ __forceinline__ span_place(const unsigned long long* masks, unsigned level, size_type begin,
                                        size_type end) {
    constexpr size_type NV = (size_type)TP_NT * TP_VT;
    const size_type tile = begin / NV;
    split = (int)((tile + 1) * NV - begin);
    // Each tile's mask only where the range reaches it (an empty range may start past the last
    // tile).
    first_scratch = end > begin && in_scratch(masks, tile, level);
    second_scratch = end > begin + split && in_scratch(masks, tile + 1, level);
  }
};

// The elements of a span_place's range in one of the two buffers: offset i from `begin` is at
// at(i), one select and an add.
template <typename T>
struct span_reader {
  const T* first;
  const T* second;
  int split;
  __device__ __forceinline__ span_reader(const T* keys, const T* scratch, const span_place& place, size_type begin)
      : first((place.first_scratch ? scratch : keys) + begin),
        second((place.second_scratch ? scratch : keys) + begin),
        split(place.split) {}
  __device__ __forceinline__ const T* at(int i) const { return (i < split ? first : second) + i; }
};

// Whether `T` moves to shared memory by cp.async: the sizes it copies (4, 8 or 16 bytes), at
// their natural alignment (so that every element of a typed buffer is aligned for it).
template <typename T>
constexpr bool copies_async() {
  return (sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16) && alignof(T) >= sizeof(T);
}

// Start copying `*src` to shared `*dst` without waiting for it (cp.async, sm_80+; as the
// mergesort's four-way tile copies its values, kernels/cta_quad_merge.cuh copy_async);
// segsort_copy_wait() waits for this thread's copies. The block sort's values and the merge
// levels' straddles move so, their loads in flight while the block does other work.
template <typename T>
__device__ __forceinline__ void segsort_copy_async(T* dst, const T* src) {
  static_assert(copies_async<T>(), "cp.async copies 4, 8 or 16 aligned bytes");
  const unsigned shared_address = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(shared_address), "l"(src), "n"(sizeof(T))
               : "memory");
}

__device__ __forceinline__ void segsort_copy_wait() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
}

// Check the segments: CSR starts from 0, not decreasing, within the keys; or ranges in order,
// each start <= end <= the next start, within the keys. The threads stride over the segments (a
// few blocks an SM); any fault marks the call's segments invalid and raises
// STATUS_SEGMENTS_INVALID, and a block that saw a segment longer than TP_SHORT_MAX sets
// CONTROL_LONG_SEGMENT once (the short path's test). Few blocks keep those writes to one word
// few: a word every warp read or wrote made the 2^27-key power-law call (25 million segments)
// 7% slower.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_segsort_check(const size_type* starts, const size_type* ends, size_type num_segments, size_type count,
                           unsigned* control, unsigned long long* status) {
  const size_type stride = (size_type)gridDim.x * blockDim.x;
  bool long_segment = false;
  for (size_type i = (size_type)blockIdx.x * blockDim.x + threadIdx.x; i < num_segments; i += stride) {
    const size_type start = starts[i];
    bool bad = start > count;
    size_type end;
    if (ends == nullptr) {
      end = i + 1 < num_segments ? starts[i + 1] : count;
      bad |= i == 0 && start != 0;
      bad |= end < start;
    } else {
      end = ends[i];
      bad |= end < start || end > count;
      bad |= i + 1 < num_segments && starts[i + 1] < end;
    }
    if (bad) {
      atomicOr(control + CONTROL_INVALID, (unsigned)INVALID_BIT);
      atomicOr(status, STATUS_SEGMENTS_INVALID);
    }
    long_segment |= !bad && end - start > (size_type)TP_SHORT_MAX;
  }
  if (__syncthreads_or(long_segment) && threadIdx.x == 0) atomicOr(control + CONTROL_LONG_SEGMENT, 1u);
}
