//! The segmented sort's short path: where no segment holds more than TP_SHORT_MAX keys, one thread sorts each segment in registers by a sorting network, in one kernel.
// Part of the segmented-sort program, after kernels/segmented_sort.cu (its control words,
// short_path_taken, segment_end and the cp.async copies), serial.cuh (network_sort) and
// mergesort_blocksort.cu (align16 and the key image).
//
// Why: with segments of 32 keys the tile path spends nearly all its time in the block sort, whose
// register sort and log2(NT) shared-memory merge levels cost every tile the same whatever the
// segments. A segment that fits one thread's registers needs none of that: block b takes the
// segments [b * TP_SHORT_NT, (b + 1) * TP_SHORT_NT), a thread each; their keys (and values) come
// into shared memory by coalesced copies of the span from the first segment's start to the last
// one's end; each thread sorts its segment with Batcher's network over TP_SHORT_MAX slots and
// writes it back; the span goes out by coalesced copies. One read and one write of the data.
//
// The check kernel records whether a segment is too long; this kernel runs only where
// short_path_taken says so and then marks the call taken (SHORT_TAKEN_BIT), so that the tile
// path's kernels return at once (tile_path_off): the host launches both without reading
// anything back (the call stays capturable in a CUDA graph).

namespace twophase {
// The kernel's parameter block, twin of the param_block! struct of
// crates/gpu/src/segmented_sort/short.rs.
struct segsort_short_params {
  key_type* keys;
  value_type* vals;
  const size_type* starts;
  const size_type* ends;
  size_type num_segments;
  size_type count;
  unsigned* control;
};
}  // namespace twophase

// Slots of a thread's register sort: the longest short segment.
constexpr int SHORT_MAX = TP_SHORT_MAX;
// Threads (and segments) of a block.
constexpr int SHORT_NT = TP_SHORT_NT;
// Positions a block stages in shared memory: its segments' span when it is no longer than all of
// them at their longest (always with CSR starts; ranges with wide gaps between them go through
// shared memory one segment a thread instead).
constexpr int SHORT_SPAN = SHORT_NT * SHORT_MAX;
// Bytes of a shared-memory bank.
constexpr int SHORT_BANK_BYTES = 4;
static_assert(SHORT_MAX >= 2 && (SHORT_MAX & (SHORT_MAX - 1)) == 0, "rows of a power of two of slots (a shift)");
static_assert(SHORT_NT % twophase::WARP_THREADS == 0, "whole warps vote on padding");
static_assert(SHORT_NT % SHORT_MAX == 0, "a block's threads step over whole rows of the span");
// A value's source lies in its own segment: within a signed byte of its position.
static_assert(SHORT_MAX <= 128, "source offsets fit a signed char");

// Whether the register sort carries each key's position in its segment: to permute the values,
// to keep equal keys that can be told apart in their order (stability: every comparison breaks
// ties by position, a total order whose every sort is the stable one), and, under a comparator
// that is not trusted, to tell padding slots from keys without asking the comparator. Without
// positions (twophase's own orders on keys alone) a compare-exchange is a min and a max.
constexpr bool SHORT_POSITIONS =
    TP_HAS_VALUES || !key_compare::equivalents_identical || !key_compare::trusted_order;
// Whether the padding slots past a segment's end hold copies of its greatest key (a trusted order
// is consistent, so they sort after every key, last among equals by their positions); otherwise
// padding is told by position alone and the comparator never sees it.
constexpr bool SHORT_PAD_BY_TOP = key_compare::trusted_order;

// Elements of padding after each row of SHORT_MAX elements of type T in shared memory: a bank's
// width (at least one element), so that thread t reading slot j of its row in a block of full
// segments hits bank (t + j) mod 32 rather than every thread of the warp the same bank.
template <typename T>
constexpr int short_row_pad() {
  return sizeof(T) >= SHORT_BANK_BYTES ? 1 : SHORT_BANK_BYTES / (int)sizeof(T);
}

// The shared-memory index of position i (not negative) of an array of T laid out in padded rows.
template <typename T>
__device__ __forceinline__ int short_skewed(int i) {
  return i + (int)((unsigned)i / SHORT_MAX) * short_row_pad<T>();
}

// A thread's row of SHORT_MAX slots from position `base` of an array of T in padded rows: slot j
// is head[j] until the row reaches the next padding (after `wrap` slots), then the same past the
// padding, so that no slot needs a division; an ALIGNED row (its base a multiple of SHORT_MAX)
// reaches none.
template <typename T>
struct short_row {
  T* head;
  T* tail;
  int wrap;
  __device__ __forceinline__ short_row(T* array, int base)
      : head(array + short_skewed<T>(base)),
        tail(head + short_row_pad<T>()),
        wrap(SHORT_MAX - (int)((unsigned)base % SHORT_MAX)) {}
  template <bool ALIGNED = false>
  __device__ __forceinline__ T& at(int j) const {
    return (!ALIGNED && j >= wrap ? tail : head)[j];
  }
};

// Shared memory of a block (dynamic: the host's short_shared_bytes): the span's keys in padded
// rows; with values, each position's value source as an offset from it (a signed byte, padded
// rows) and the span's values in plain order (read back in order, each from a few positions off).
struct short_smem {
  static constexpr int KEY_BYTES =
      align16((SHORT_SPAN + SHORT_NT * short_row_pad<key_type>()) * (int)sizeof(key_type));
  static constexpr int SOURCE_BYTES =
      TP_HAS_VALUES ? align16(SHORT_SPAN + SHORT_NT * short_row_pad<signed char>()) : 0;
  static constexpr int VALUE_BYTES = TP_HAS_VALUES ? align16(SHORT_SPAN * (int)sizeof(value_type)) : 0;
  static constexpr int BYTES = KEY_BYTES + SOURCE_BYTES + VALUE_BYTES;
};

// The block's shared arrays.
struct short_shared {
  key_type* keys;
  signed char* sources;
  value_type* vals;
};

// One element into shared memory: by cp.async where the type allows it (finished by
// segsort_copy_wait), so that all of a thread's loads are in flight at once without holding
// registers.
template <typename T>
__device__ __forceinline__ void short_copy_in(T* dst, const T* src) {
  if constexpr (copies_async<T>()) {
    segsort_copy_async(dst, src);
  } else {
    *dst = *src;
  }
}

// The block's span [lo, lo + span) between global and shared memory, coalesced: thread tid moves
// positions tid + SHORT_NT * k. SHORT_NT is a whole number of rows, so each array's index
// advances by a constant. Coming in, every position's value source is itself (the gaps between
// ranges keep their keys and values); going out, each value comes from its source.
template <bool TO_SHARED>
__device__ __forceinline__ void short_move_span(const twophase::segsort_short_params& p, const short_shared& sh,
                                                size_type lo, int span, int tid) {
  constexpr int KEY_STEP = SHORT_NT + SHORT_NT / SHORT_MAX * short_row_pad<key_type>();
  constexpr int SOURCE_STEP = SHORT_NT + SHORT_NT / SHORT_MAX * short_row_pad<signed char>();
  const int key0 = short_skewed<key_type>(tid), source0 = short_skewed<signed char>(tid);
#pragma unroll
  for (int k = 0; k < SHORT_MAX; ++k) {
    const int o = tid + SHORT_NT * k;
    if (o >= span) continue;
    const int key = key0 + KEY_STEP * k, source = source0 + SOURCE_STEP * k;
    if constexpr (TO_SHARED) {
      short_copy_in(sh.keys + key, p.keys + lo + o);
      if constexpr (TP_HAS_VALUES) {
        short_copy_in(sh.vals + o, p.vals + lo + o);
        sh.sources[source] = 0;
      }
    } else {
      p.keys[lo + o] = sh.keys[key];
      if constexpr (TP_HAS_VALUES) p.vals[lo + o] = sh.vals[o + sh.sources[source]];
    }
  }
}

// A thread's own segment [start, start + len) between global memory and its row at `base`
// (segments too far apart to stage their span). The sort writes every slot's value source.
template <bool TO_SHARED>
__device__ __forceinline__ void short_move_row(const twophase::segsort_short_params& p, const short_shared& sh,
                                               size_type start, int base, int len) {
  const short_row<key_type> keys(sh.keys, base);
  const short_row<signed char> sources(sh.sources, base);
#pragma unroll
  for (int j = 0; j < SHORT_MAX; ++j) {
    if (j >= len) continue;
    if constexpr (TO_SHARED) {
      short_copy_in(&keys.at(j), p.keys + start + j);
      if constexpr (TP_HAS_VALUES) short_copy_in(sh.vals + base + j, p.vals + start + j);
    } else {
      p.keys[start + j] = keys.at(j);
      if constexpr (TP_HAS_VALUES) p.vals[start + j] = sh.vals[base + j + sources.at(j)];
    }
  }
  (void)sources;  // only values have sources
}

// A key of the register sort and its position in its segment (slots past the segment's length
// are padding).
struct short_item {
  key_type key;
  int pos;
};

// Less-than on items: by key, ties by position. With CHECK_PADDING, any pair that holds a padding
// slot is ordered by position alone (keys before padding), so that the comparator only ever sees
// the segment's keys and, whatever it answers, the 0-1 image (key or padding) of every
// compare-exchange is sorted: the padding ends past the segment's length and every source
// position of the first `len` slots lies within it.
template <bool CHECK_PADDING>
struct short_item_compare {
  int len;
  __device__ __forceinline__ bool operator()(const short_item& a, const short_item& b) const {
    if (CHECK_PADDING && max(a.pos, b.pos) >= len) return a.pos < b.pos;
    const key_compare comp;
    return comp(a.key, b.key) || (!comp(b.key, a.key) && a.pos < b.pos);
  }
};

// The key of a slot of either register sort.
__device__ __forceinline__ key_type& short_key_of(short_item& item) { return item.key; }
__device__ __forceinline__ key_type& short_key_of(key_type& key) { return key; }

// Fill the padding slots [len, SHORT_MAX) with copies of the greatest key of [0, len) under a
// trusted order, so that they sort last. Skipped by whole warps whose segments are all full.
template <typename item_t>
__device__ __forceinline__ void short_pad_by_top(item_t (&items)[SHORT_MAX], int len) {
  constexpr unsigned FULL_WARP = 0xffffffffu;
  if (!__any_sync(FULL_WARP, len < SHORT_MAX)) return;
  const key_compare comp;
  key_type top = short_key_of(items[0]);
#pragma unroll
  for (int j = 1; j < SHORT_MAX; ++j) {
    if (j < len && comp(top, short_key_of(items[j]))) top = short_key_of(items[j]);
  }
#pragma unroll
  for (int j = 1; j < SHORT_MAX; ++j) {
    if (j >= len) short_key_of(items[j]) = top;
  }
}

// Sort this thread's segment of `len` keys, its row at `base` of the block's shared keys, in
// place (as their images); with values, record each sorted slot's value source. FULL: every
// thread of the warp has SHORT_MAX keys in a row that starts a padded row (segments of exactly
// SHORT_MAX keys), so slots need neither a length test nor padding.
template <bool FULL>
__device__ __forceinline__ void short_sort_row(const short_shared& sh, int base, int len) {
  const short_row<key_type> row(sh.keys, base);
  const int n = FULL ? SHORT_MAX : len;
  if constexpr (SHORT_POSITIONS) {
    short_item items[SHORT_MAX];
#pragma unroll
    for (int j = 0; j < SHORT_MAX; ++j) {
      items[j].key = j < n ? twophase_key_image(row.at<FULL>(j)) : key_type();
      items[j].pos = j;
    }
    if constexpr (!FULL && SHORT_PAD_BY_TOP) short_pad_by_top(items, len);
    twophase::network_sort<SHORT_MAX>(items, short_item_compare<!FULL && !SHORT_PAD_BY_TOP>{n});
    const short_row<signed char> sources(sh.sources, base);
#pragma unroll
    for (int j = 0; j < SHORT_MAX; ++j) {
      if (j >= n) continue;
      row.at<FULL>(j) = twophase_key_from_image(items[j].key);
      if constexpr (TP_HAS_VALUES) sources.at<FULL>(j) = (signed char)(items[j].pos - j);
    }
    (void)sources;  // only values have sources
  } else {
    key_type keys[SHORT_MAX];
#pragma unroll
    for (int j = 0; j < SHORT_MAX; ++j) keys[j] = j < n ? twophase_key_image(row.at<FULL>(j)) : key_type();
    if constexpr (!FULL) short_pad_by_top(keys, len);
    twophase::network_sort<SHORT_MAX>(keys, key_compare());
#pragma unroll
    for (int j = 0; j < SHORT_MAX; ++j) {
      if (j < n) row.at<FULL>(j) = twophase_key_from_image(keys[j]);
    }
  }
}

// One group of SHORT_NT segments (`group`): loaded, sorted a thread each, stored.
__device__ __forceinline__ void short_sort_group(const twophase::segsort_short_params& p, size_type group,
                                                 unsigned char* smem) {
  constexpr unsigned FULL_WARP = 0xffffffffu;
  const int tid = threadIdx.x;
  const short_shared sh = {reinterpret_cast<key_type*>(smem),
                           reinterpret_cast<signed char*>(smem + short_smem::KEY_BYTES),
                           reinterpret_cast<value_type*>(smem + short_smem::KEY_BYTES + short_smem::SOURCE_BYTES)};

  // The group's segments [first, last), this thread's segment (none past the last: length 0),
  // and their span [lo, hi) of key positions. The check found the segments valid and none longer
  // than SHORT_MAX (the min only keeps every index inside the thread's row regardless).
  const size_type first = group * SHORT_NT;
  const size_type last = min(first + SHORT_NT, p.num_segments);
  const size_type segment = first + tid;
  const bool has_segment = segment < last;
  const size_type start = has_segment ? p.starts[segment] : 0;
  const int len =
      has_segment
          ? (int)min(segment_end(p.starts, p.ends, p.num_segments, p.count, segment) - start, (size_type)SHORT_MAX)
          : 0;
  const size_type lo = p.starts[first];
  const size_type hi = segment_end(p.starts, p.ends, p.num_segments, p.count, last - 1);
  // Staged: the span fits; the threads move it in turn, coalesced (gaps between ranges included:
  // they go back out unchanged), and each thread's row starts at its segment's offset in it.
  // Else (ranges far apart) each thread moves its own segment to and from the row
  // SHORT_MAX * tid.
  const bool staged = hi - lo <= (size_type)SHORT_SPAN;
  const int span = (int)min(hi - lo, (size_type)SHORT_SPAN);
  const int base = staged ? (int)(start - lo) : SHORT_MAX * tid;

  if (staged) {
    short_move_span<true>(p, sh, lo, span, tid);
  } else {
    short_move_row<true>(p, sh, start, base, len);
  }
  segsort_copy_wait();
  __syncthreads();  // every thread's copies in shared memory

  // Each thread reads and writes only its own row.
  if (__all_sync(FULL_WARP, len == SHORT_MAX && base % SHORT_MAX == 0)) {
    short_sort_row<true>(sh, base, len);
  } else {
    short_sort_row<false>(sh, base, len);
  }
  __syncthreads();  // every row sorted

  if (staged) {
    short_move_span<false>(p, sh, lo, span, tid);
  } else {
    short_move_row<false>(p, sh, start, base, len);
  }
}

// The short path: every segment of the call sorted by one thread, where short_path_taken (else
// it returns at once and the tile path sorts). Types wider than the short path takes compile to
// an empty kernel, which the host does not launch.
extern "C" __global__ void __launch_bounds__(TP_SHORT_NT)
    twophase_segsort_short(key_type* keys, value_type* vals, const size_type* starts, const size_type* ends,
                           size_type num_segments, size_type count, unsigned* control) {
  extern __shared__ __align__(16) unsigned char smem[];
  follow_previous_launch();
  if constexpr (SHORT_PATH_TYPES) {
    if (!short_path_taken(control)) return;
    // The tile path's kernels, launched after this one, return at once.
    if (blockIdx.x == 0 && threadIdx.x == 0) atomicOr(control + CONTROL_INVALID, (unsigned)SHORT_TAKEN_BIT);
    const twophase::segsort_short_params p = {keys, vals, starts, ends, num_segments, count, control};
    // A grid of a few blocks an SM striding over the groups: where the tile path takes the call,
    // only these read the control word.
    const size_type groups = (num_segments + SHORT_NT - 1) / SHORT_NT;
    for (size_type group = blockIdx.x; group < groups; group += gridDim.x) {
      short_sort_group(p, group, smem);
      __syncthreads();  // the group's stores have read shared memory before the next loads
    }
  }
}
