//! The textbook merges' shared helpers (namespace textbook): views of a piece, in-order checks, co-ranks.
#pragma once
// The host prepends a prelude defining key_type, key_compare, value_type, TP_NT, TP_VT,
// TP_HAS_VALUES, TP_PARTITION_NT (program.rs) and TP_TILES_PER_BLOCK (variants/textbook), then
// partition.cuh and serial.cuh. The kernels are those of Hwu, Kirk and El Hajj, Programming Massively Parallel
// Processors, 4th ed., ch. 12, written anew; where they differ from the published code, a
// comment says so and why. Common to all three:
// - Sizes and offsets of the global arrays are 64-bit (size_type): the published kernels use
//   int, which overflows past 2^31 elements.
// - The co-rank is merge_path<bounds_lower> (the stable rule: A first on ties), and the
//   sequential merge is serial_merge from serial.cuh, run on VT outputs at a time (fully
//   unrolled) over an indexable view of the thread's keys, instead of a separate
//   merge_sequential / merge_sequential_circular per kernel.
// - With TP_HAS_VALUES the merge also moves a value per key (the published kernels merge keys
//   only): serial_merge reports where each output came from, and the value is copied from there.
// - Each thread owns VT outputs per tile (basic: per thread), a compile-time constant, where the
//   published kernels divide a runtime output count by the thread count.
// - The published kernels search the co-ranks of both ends of every piece (basic: each thread
//   both of its own; tiled and circular: thread 0 both of its block's), so each boundary between
//   two pieces is searched twice, and assume sorted inputs and a strict weak order: otherwise
//   they read and write out of bounds. Here any keys and any comparator, even one whose answers
//   change from call to call (a boundary searched twice can then be answered twice, and the two
//   pieces overlap or leave a gap that neither piece's own check sees), keep every read and write
//   inside the inputs' and the output's ranges and the output a permutation of the input: every
//   boundary is searched exactly once and read by both pieces it separates.
//   - Between blocks: the block cuts come from a partition launch (twophase_textbook_partition,
//     on twophase::search_partitions as the two-phase merge's): it searches each cut once, checks
//     every adjacent pair as stored and reports the first pair out of order to the repair slot
//     (partition.cuh), and every block reads its two cuts repaired past that boundary
//     (block_range), so that the blocks cover both inputs exactly once.
//   - Within a block: each thread searches only the co-rank of its outputs' end and takes its
//     start from the thread before through shared memory (thread 0: the block's or the tile's
//     start); one barrier checks that every thread's step is monotone. Where one is not, the
//     block's outputs (basic) or the tile's (tiled, circular) are what it consumes of A followed
//     by what it consumes of B, and STATUS_ORDER_INCONSISTENT is raised.
// - Unsorted inputs are detected: the tiled and circular kernels check every key they load
//   against the key before it (a first-level cache hit), and raise STATUS_FIRST_UNSORTED /
//   STATUS_SECOND_UNSORTED for A / B. The basic kernel, which loads no tiles, checks in registers
//   that its merged outputs are in order (the first against the keys before its pieces), and
//   when not, its pieces of A and B. STATUS_ORDER_INCONSISTENT: block cuts or a thread's co-ranks
//   out of order (unsorted input or an inconsistent comparator), or outputs out of order from
//   inputs in order.

using twophase::merge_range;
using twophase::size_type;

namespace textbook {

constexpr int NT = TP_NT;
constexpr int VT = TP_VT;
// Outputs a block merges per iteration (tiled, circular) and per block (basic).
constexpr int TILE = NT * VT;
// Outputs of one block of the tiled and circular kernels: TP_TILES_PER_BLOCK iterations.
constexpr size_type BLOCK_OUTPUTS = (size_type)TILE * TP_TILES_PER_BLOCK;

// The keys of one thread's piece of the merge read straight from global memory, seen as the one
// buffer serial_merge expects: positions [0, a_count) are a[0..], then b[0..]. serial_merge reads
// one position past the last output it consumes; those reads are clamped to the last key of the
// piece, so nothing outside the piece is touched (its value is never used).
struct global_pair {
  const key_type* a;
  const key_type* b;
  int a_count;
  int total;  // >= 1 whenever read
  __device__ __forceinline__ key_type operator[](int i) const {
    i = min(i, total - 1);
    return i < a_count ? a[i] : b[i - a_count];
  }
};

// The ring slot `i` places after slot `head` (head < TILE, i <= TILE): one subtraction, no modulo.
__device__ __forceinline__ int ring_slot(int head, int i) {
  const int slot = head + i;
  return slot >= TILE ? slot - TILE : slot;
}

// One input's ring buffer in shared memory: position i of the unconsumed input is slot
// (head + i) mod TILE.
struct ring_view {
  const key_type* slots;
  int head;
  __device__ __forceinline__ key_type operator[](int i) const { return slots[ring_slot(head, i)]; }
};

// Both ring buffers as serial_merge's one buffer: A's a_count unconsumed keys, then B's. The one
// read past the end lands on a slot of B's ring (its value is never used).
struct ring_pair {
  ring_view a;
  int a_count;
  ring_view b;
  __device__ __forceinline__ key_type operator[](int i) const { return i < a_count ? a[i] : b[i - a_count]; }
};

// The key before a piece of one input, when the piece does not start the input.
struct key_before_t {
  bool present;
  key_type key;
};

// Status bits of a piece whose merged outputs came out of order: the input (A, B or both) with
// adjacent keys out of order among its piece of `range` over `keys` and the key before it
// (`a_prev`, `b_prev`), or STATUS_ORDER_INCONSISTENT when both pieces are in order (then the
// comparator is not a strict weak order). Only run on input that broke a precondition; not
// unrolled, to keep the merge's registers.
template <typename keys_it>
__device__ __forceinline__ unsigned unsorted_inputs(const keys_it& keys, const merge_range& range,
                                                    const key_before_t& a_prev, const key_before_t& b_prev) {
  // One input's piece [begin, end) with the key before it: `bit` if a pair is out of order.
  const auto piece_unsorted = [&](int begin, int end, const key_before_t& prev, unsigned bit) {
    if (prev.present && begin < end && key_compare()(keys[begin], prev.key)) return bit;
    return twophase::run_unsorted(keys, begin + 1, end - 1, begin, end, bit, key_compare());
  };
  const unsigned bits = piece_unsorted(range.a_begin, range.a_end, a_prev, twophase::STATUS_FIRST_UNSORTED) |
                        piece_unsorted(range.b_begin, range.b_end, b_prev, twophase::STATUS_SECOND_UNSORTED);
  return bits ? bits : (unsigned)twophase::STATUS_ORDER_INCONSISTENT;
}

// Merge the range.total() <= VT outputs of `range` over `keys` (positions below `a_split` are
// A's, the rest B's) and write them straight to out[0..], as the textbook's sequential merge
// does: each thread its own consecutive outputs, so a warp's stores are VT elements apart (not
// coalesced). Values are copied from a_vals / b_vals (positions relative to the same starts as
// `keys`). `full` selects serial_merge's unchecked form (exactly VT outputs).
// With `check_order` (the basic kernel, which loads no tiles to check), also checks that the
// outputs are in order, the first against the keys before the piece (`a_prev`, `b_prev`), in
// registers: sorted inputs under a strict weak order merge into sorted outputs, so outputs out of
// order mean that a precondition broke, and unsorted_inputs names it.
template <bool full, bool check_order, typename keys_it>
__device__ __forceinline__ void merge_to_global(keys_it keys, merge_range range, int a_split, key_type* out,
                                                const value_type* a_vals, const value_type* b_vals,
                                                value_type* out_vals, key_before_t a_prev, key_before_t b_prev,
                                                const twophase::input_check& check) {
  const merge_range piece = range;
  const int count = range.total();
  key_type merged[VT];
  int sources[VT];
  twophase::serial_merge<twophase::bounds_lower, VT, !full>(keys, range, key_compare(), merged, sources);
  bool out_of_order = false;
#pragma unroll
  for (int i = 0; i < VT; ++i) {
    if (full || i < count) {
      out[i] = merged[i];
      if (TP_HAS_VALUES) out_vals[i] = sources[i] < a_split ? a_vals[sources[i]] : b_vals[sources[i] - a_split];
      if (check_order && i > 0) out_of_order |= key_compare()(merged[i], merged[i - 1]);
    }
  }
  if (check_order && count > 0) {
    out_of_order |= a_prev.present && key_compare()(merged[0], a_prev.key);
    out_of_order |= b_prev.present && key_compare()(merged[0], b_prev.key);
  }
  if (out_of_order) twophase::raise_status(check, unsorted_inputs(keys, piece, a_prev, b_prev));
}

// The fallback of a tile whose threads' pieces were out of order: this thread's outputs
// [d0, d1) of the tile are positions d0.. of the tile's consumed A keys (positions [0, a_used)
// of `keys`) followed by its consumed B keys (from position a_split on), a permutation of what
// the tile consumes whatever the comparator answered; written straight to out[0..].
template <typename keys_it>
__device__ __forceinline__ void concatenate_to_global(keys_it keys, int a_used, int a_split, int d0, int d1,
                                                      key_type* out, const value_type* a_vals,
                                                      const value_type* b_vals, value_type* out_vals) {
  for (int i = d0; i < d1; ++i) {
    const int source = i < a_used ? i : a_split + (i - a_used);
    out[i - d0] = keys[source];
    if (TP_HAS_VALUES) out_vals[i - d0] = source < a_split ? a_vals[source] : b_vals[source - a_split];
  }
}

// A thread's outputs [d0, d1) of a piece of the merge and the A keys before each end.
struct thread_co_ranks {
  int d0, d1;
  int m0, m1;
};

// The co-ranks of this thread's outputs [d0, d1) of a piece (a block's or a tile's outputs) over
// `a_len` A keys and `b_len` B keys, with d1 = d0 + VT clamped to the piece's `count` outputs: the
// end searched (the thread's only search) and stored in ends[threadIdx.x], the start read from the
// thread before (0 for thread 0), so that neighbours agree on the boundary between them whatever
// the comparator answers. The last thread's end (d1 == count) is the piece's consumption of A.
// Every thread of the block calls (one barrier); a barrier must come before `ends` is written
// again.
template <typename a_it, typename b_it>
__device__ __forceinline__ thread_co_ranks find_co_ranks(a_it a_view, int a_len, b_it b_view, int b_len, int count,
                                                         int (&ends)[NT]) {
  const int tid = threadIdx.x;
  thread_co_ranks r;
  r.d0 = min(VT * tid, count);
  r.d1 = min(r.d0 + VT, count);
  r.m1 = twophase::merge_path<twophase::bounds_lower, int>(a_view, a_len, b_view, b_len, r.d1, key_compare());
  ends[tid] = r.m1;
  __syncthreads();
  r.m0 = tid > 0 ? ends[tid - 1] : 0;
  return r;
}

// One tile of the tiled and circular kernels, its keys loaded: every thread finds the co-ranks of
// its VT outputs among the tile's out_cnt (over a_view's a_len keys and b_view's b_len;
// find_co_ranks, through `ends`), checks with the others that the pieces are in order (a second
// barrier) and merges its piece (`keys`: tile position i, A's then B's, a_len of A) to
// out + first, or, where the pieces were out of order, writes its share of the consumed keys
// concatenated (STATUS_ORDER_INCONSISTENT). The value pointers start at the tile's first A and B
// keys. Returns the A keys the tile consumed: the last thread's end co-rank, read from `ends`.
// The tile's keys and `ends` are still being read when it returns: a barrier must come before
// they are overwritten.
template <typename view_t, typename keys_it>
__device__ __forceinline__ int merge_tile(view_t a_view, int a_len, view_t b_view, int b_len, keys_it keys, int out_cnt,
                                          size_type out_pos, key_type* out, const value_type* a_vals,
                                          const value_type* b_vals, value_type* out_vals, int (&ends)[NT],
                                          const twophase::input_check& check, int* b_used = nullptr) {
  const int tid = threadIdx.x;
  const thread_co_ranks r = find_co_ranks(a_view, a_len, b_view, b_len, out_cnt, ends);
  const int d0 = r.d0, d1 = r.d1, m0 = r.m0, m1 = r.m1;
  const bool pieces_in_order = __syncthreads_and(twophase::monotone_step(m0, d0, m1, d1));
  const int a_used = ends[NT - 1];  // d1 == out_cnt in the last thread: the tile's consumption of A
  if (b_used) *b_used = out_cnt - a_used;
  const size_type first = out_pos + d0;
  if (pieces_in_order) {
    const merge_range range = {m0, m1, a_len + d0 - m0, a_len + d1 - m1};
    if (out_cnt == TILE) {
      merge_to_global<true, false>(keys, range, a_len, out + first, a_vals, b_vals, out_vals + first, key_before_t{},
                                   key_before_t{}, check);
    } else if (d1 > d0) {
      merge_to_global<false, false>(keys, range, a_len, out + first, a_vals, b_vals, out_vals + first,
                                    key_before_t{}, key_before_t{}, check);
    }
  } else {
    concatenate_to_global(keys, a_used, a_len, d0, d1, out + first, a_vals, b_vals, out_vals + first);
    if (tid == 0) twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
  }
  return a_used;
}

// A block's cut of the whole merge: its outputs [out_begin, out_end) and the A keys before each
// end (a_begin, a_end); the B keys before each end are the rest.
struct block_cut {
  size_type out_begin, out_end, a_begin, a_end;
  __device__ __forceinline__ size_type b_begin() const { return out_begin - a_begin; }
  __device__ __forceinline__ size_type b_end() const { return out_end - a_end; }
};

// This block's cut, `spacing` outputs (the last block's fewer; the spacing of the partition
// launch), from the partition launch's boundaries `partitions` (one per block and one more), as
// twophase_merge_tile reads its tile's: repaired past the first bad boundary of this launch
// (twophase::repaired_boundary) and the end kept within `spacing` of the start
// (twophase::clamped_tile_end, a no-op on boundaries searched once and checked), so
// that the blocks cover both inputs exactly once and each block's ranges lie inside them
// whatever the comparator answered. Read only after twophase::pdl_wait.
__device__ __forceinline__ block_cut block_range(const size_type* __restrict__ partitions, size_type a_count,
                                                 size_type total, size_type spacing,
                                                 const twophase::input_check& check) {
  const size_type block = blockIdx.x;
  block_cut cut;
  cut.out_begin = block * spacing;
  cut.out_end = cut.out_begin + spacing < total ? cut.out_begin + spacing : total;
  size_type a0 = partitions[block];
  size_type a1 = partitions[block + 1];
  const size_type bad = twophase::first_bad_boundary(check);
  if (bad != twophase::NO_BAD_BOUNDARY) {
    // bad < 2^32 and spacing < 2^31: the product does not overflow.
    const size_type bad_diag = bad * spacing < total ? bad * spacing : total;
    const size_type bad_path = partitions[bad];
    a0 = twophase::repaired_boundary(block, a0, cut.out_begin, bad, bad_path, bad_diag, a_count);
    a1 = twophase::repaired_boundary(block + 1, a1, cut.out_end, bad, bad_path, bad_diag, a_count);
  }
  cut.a_begin = a0;
  cut.a_end = twophase::clamped_tile_end(a0, a1, cut.out_end - cut.out_begin);
  return cut;
}

// The key before position `pos` of a global input (none at its start): the predecessor a piece's
// first output is checked against.
__device__ __forceinline__ key_before_t key_before(const key_type* keys, size_type pos) {
  key_before_t before = {};
  before.present = pos > 0;
  if (before.present) before.key = keys[pos - 1];
  return before;
}

// Copy src[first + i] for i in [0, count) to dst[slot(i)], strided over the block (coalesced),
// checking each key against the key before it in src (the same or the neighbouring cache line, a
// first-level cache hit): whether any adjacent pair of src from `first - 1` on is out of order.
template <typename slot_fn>
__device__ __forceinline__ bool load_checked(const key_type* __restrict__ src, size_type first, int count,
                                             key_type* dst, slot_fn slot) {
  bool descends = false;
  for (int i = threadIdx.x; i < count; i += NT) {
    const key_type key = src[first + i];
    dst[slot(i)] = key;
    if (first + i > 0) descends |= key_compare()(key, src[first + i - 1]);
  }
  return descends;
}

// The status bits of inputs found out of order while loading.
__device__ __forceinline__ unsigned descent_bits(bool a_descends, bool b_descends) {
  return (a_descends ? twophase::STATUS_FIRST_UNSORTED : 0u) | (b_descends ? twophase::STATUS_SECOND_UNSORTED : 0u);
}

}  // namespace textbook
