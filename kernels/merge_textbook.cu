//! The textbook's parallel merge kernels (basic, tiled, circular buffer), corrected, between block cuts from one partition launch.
// Part of the textbook merge program, after merge_textbook.cuh (its helpers, and what is common
// to all three kernels and where they differ from the published code).

namespace twophase {
// The kernels' parameter blocks, twins of TextbookPartitionParams (the partition kernel) and
// TextbookMergeParams (the basic, tiled and circular kernels) in
// crates/gpu/src/variants/textbook/mod.rs (the generated program static_asserts the layouts equal
// and that each kernel's parameters are these fields in order).
typedef partition_params<merge_inputs<key_type>> textbook_partition_params;

struct textbook_merge_fields : merge_inputs<key_type> {
  const size_type* partitions;
  key_type* out;
  const value_type* a_vals;
  const value_type* b_vals;
  value_type* out_vals;
};
typedef checked_params<textbook_merge_fields> textbook_merge_params;
}  // namespace twophase

// The parameters of the basic, tiled and circular kernels: the fields of textbook_merge_params.
#define TWOPHASE_TEXTBOOK_MERGE_PARAMS                                                                         \
  const key_type* __restrict__ a, size_type a_count, const key_type* __restrict__ b, size_type b_count,       \
      const size_type* __restrict__ partitions, key_type* __restrict__ out,                                   \
      const value_type* __restrict__ a_vals, const value_type* __restrict__ b_vals,                           \
      value_type* __restrict__ out_vals, unsigned long long* status, unsigned long long* repair, unsigned generation

// Phase 1 of every kernel below: partitions[p] = the co-rank (A keys among the first outputs) at
// output min(p * spacing, total), `spacing` being a block's outputs (basic: TILE; tiled and
// circular: BLOCK_OUTPUTS), each searched once by a group of `lanes` lanes
// (twophase::search_partitions, as twophase_merge_partition). Every adjacent pair is checked as
// stored, and the first pair out of order (unsorted inputs, or a comparator that is not a strict
// weak order) is reported to the repair slot, past which the blocks read a repaired path
// (block_range). The published kernels have each block (basic: each thread) search its own two
// cuts, so that neighbours search their shared cut twice: with a comparator whose answers
// change, the two searches can disagree, and the pieces then overlap or leave a gap.
extern "C" __global__ void __launch_bounds__(TP_PARTITION_NT)
    twophase_textbook_partition(const key_type* __restrict__ a, size_type a_count, const key_type* __restrict__ b,
                                size_type b_count, size_type spacing, size_type num_partitions,
                                size_type* __restrict__ partitions, size_type lanes, unsigned* arrivals,
                                unsigned long long* status, unsigned long long* repair, unsigned generation) {
  twophase::pdl_launch_dependents();  // the merge kernel's blocks wait for this grid's partitions
  const twophase::input_check check = {status, repair, generation};
  twophase::merge_partitions<TP_PARTITION_NT>(a, a_count, b, b_count, spacing, num_partitions, partitions, (int)lanes,
                                              arrivals, check, key_compare());
}

// Basic: thread t of block w merges outputs [t * VT, (t + 1) * VT) of the block's TILE, after
// finding the co-rank of its end by binary search in global memory, then merges from global
// memory into global memory.
// Differs from the textbook:
// - The published kernel gives each thread ceil(total / threads) outputs of a fixed grid; here
//   each thread has VT outputs (a compile-time constant, so the merge loop unrolls) and the grid
//   grows with the input. Indices are 64-bit.
// - The published kernel has every thread search the co-ranks of both ends of its range, so
//   that each boundary between two threads is searched twice. Here the block's two cuts come
//   from the partition launch (block_range) and each thread searches only its end inside the
//   block's ranges, its start being the thread before's end, passed through shared memory
//   (find_co_ranks). Where a thread's step is not monotone, the block writes its A range followed
//   by its B range (STATUS_ORDER_INCONSISTENT): a permutation of what it consumes.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_merge_basic(TWOPHASE_TEXTBOOK_MERGE_PARAMS) {
  using namespace textbook;
  __shared__ int ends[NT];
  twophase::pdl_wait();  // the partition kernel's cuts
  const twophase::input_check check = {status, repair, generation};
  const block_cut cut = block_range(partitions, a_count, a_count + b_count, TILE, check);
  const key_type* block_a = a + cut.a_begin;
  const key_type* block_b = b + cut.b_begin();
  const int a_len = (int)(cut.a_end - cut.a_begin);
  const int count = (int)(cut.out_end - cut.out_begin);
  const thread_co_ranks r = find_co_ranks(block_a, a_len, block_b, count - a_len, count, ends);
  const bool pieces_in_order = __syncthreads_and(twophase::monotone_step(r.m0, r.d0, r.m1, r.d1));
  const size_type first = cut.out_begin + r.d0;
  if (!pieces_in_order) {
    const global_pair block_keys = {block_a, block_b, a_len, count};
    concatenate_to_global(block_keys, a_len, a_len, r.d0, r.d1, out + first, a_vals + cut.a_begin,
                          b_vals + cut.b_begin(), out_vals + first);
    if (threadIdx.x == 0) twophase::raise_status(check, twophase::STATUS_ORDER_INCONSISTENT);
    return;
  }
  const size_type i0 = cut.a_begin + r.m0;
  const size_type j0 = cut.b_begin() + (r.d0 - r.m0);
  const int a_cnt = r.m1 - r.m0;
  const int piece = r.d1 - r.d0;
  const global_pair keys = {a + i0, b + j0, a_cnt, piece};
  const merge_range range = {0, a_cnt, a_cnt, piece};
  const key_before_t a_prev = key_before(a, i0);
  const key_before_t b_prev = key_before(b, j0);
  if (piece == VT) {
    merge_to_global<true, true>(keys, range, a_cnt, out + first, a_vals + i0, b_vals + j0, out_vals + first, a_prev,
                                b_prev, check);
  } else if (piece > 0) {
    merge_to_global<false, true>(keys, range, a_cnt, out + first, a_vals + i0, b_vals + j0, out_vals + first, a_prev,
                                 b_prev, check);
  }
}

// Tiled: the block walks its output range one tile of TILE outputs at a time. Each iteration
// loads the next min(TILE, left) keys of A and of B into shared memory (coalesced), every
// thread finds the co-ranks of its VT outputs inside the shared tile and merges them, and the
// co-rank of the tile's end says how much of A and B the tile consumed; the rest is loaded again.
// Differs from the textbook:
// - The consumed count is the co-rank at the tile's real output count min(TILE, left) over the
//   real loaded lengths; the published kernel searches at tile_size over tile_size-long inputs,
//   which is wrong for the last (partial) tile and when an input has fewer than tile_size keys
//   left (it then reads keys that were never loaded).
// - The block's two cuts come from the partition launch (block_range), each searched once;
//   the published kernel has thread 0 of every block search both of its block's, so that each
//   cut between two blocks is searched twice.
// - Inside a tile each thread searches only the co-rank of its outputs' end; its start is the
//   thread before's end, passed through shared memory (find_co_ranks). The tile's consumption is
//   not searched again either: it is the end co-rank of the last thread, whose output range ends
//   at the tile's end.
// - B's keys follow A's directly in one shared buffer (A then B, as serial_merge expects) rather
//   than at a fixed offset of tile_size.
// - The threads' co-ranks are checked (one more barrier per tile); a tile whose pieces are out of
//   order writes what it consumes concatenated.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_merge_tiled(TWOPHASE_TEXTBOOK_MERGE_PARAMS) {
  using namespace textbook;
  // A's tile, then B's, and the slot serial_merge may read one past the end.
  __shared__ key_type keys_shared[2 * TILE + 1];
  __shared__ int ends[NT];
  twophase::pdl_wait();  // the partition kernel's cuts
  const twophase::input_check check = {status, repair, generation};
  const block_cut cut = block_range(partitions, a_count, a_count + b_count, BLOCK_OUTPUTS, check);
  size_type out_pos = cut.out_begin, a_pos = cut.a_begin, b_pos = cut.b_begin();
  const size_type out_end = cut.out_end, a_end = cut.a_end, b_end = cut.b_end();
  bool a_descends = false, b_descends = false;  // adjacent keys out of order among those loaded

  while (out_pos < out_end) {
    const int a_len = (int)(a_end - a_pos < TILE ? a_end - a_pos : TILE);
    const int b_len = (int)(b_end - b_pos < TILE ? b_end - b_pos : TILE);
    a_descends |= load_checked(a, a_pos, a_len, keys_shared, [](int i) { return i; });
    b_descends |= load_checked(b, b_pos, b_len, keys_shared, [a_len](int i) { return a_len + i; });
    __syncthreads();

    const int out_cnt = (int)(out_end - out_pos < TILE ? out_end - out_pos : TILE);
    const int a_used = merge_tile(keys_shared, a_len, keys_shared + a_len, b_len, keys_shared, out_cnt, out_pos, out,
                                  a_vals + a_pos, b_vals + b_pos, out_vals, ends, check);
    __syncthreads();  // every thread is done with the tile
    a_pos += a_used;
    b_pos += out_cnt - a_used;
    out_pos += out_cnt;
  }
  if (a_descends || b_descends) twophase::raise_status(check, descent_bits(a_descends, b_descends));
}

// Circular buffer: as the tiled kernel, but the keys a tile did not consume stay in shared memory
// (one ring buffer of TILE slots per input) and each iteration loads only as many new keys as the
// last one consumed, so every input key is read from global memory once. The co-ranks and the
// serial merge index through the rings.
// Differs from the textbook:
// - Each thread searches the co-rank of its own output range's end and takes its start from the
//   thread before (find_co_ranks); the published kernel computes a_next with c_curr, the same
//   output index as a_curr, so every thread merges an empty A range.
// - As in the tiled kernel, the block's cuts come from the partition launch, the consumed count
//   is the last thread's end co-rank at the real output count over the real ring fill levels, and
//   a tile whose pieces are out of order writes what it consumes concatenated.
// - The rings are read through ring_view / ring_pair (one subtraction instead of a modulo per
//   access), with the same merge_path and serial_merge as every other merge.
extern "C" __global__ void __launch_bounds__(TP_NT)
    twophase_merge_circular(TWOPHASE_TEXTBOOK_MERGE_PARAMS) {
  using namespace textbook;
  __shared__ key_type a_ring[TILE];
  __shared__ key_type b_ring[TILE];
  __shared__ int ends[NT];
  twophase::pdl_wait();  // the partition kernel's cuts
  const twophase::input_check check = {status, repair, generation};
  const block_cut cut = block_range(partitions, a_count, a_count + b_count, BLOCK_OUTPUTS, check);
  size_type out_pos = cut.out_begin;
  const size_type out_end = cut.out_end;
  // Global positions of each ring's first unconsumed key and of the next key to load.
  size_type a_pos = cut.a_begin, b_pos = cut.b_begin();
  size_type a_next = a_pos, b_next = b_pos;
  const size_type a_end = cut.a_end, b_end = cut.b_end();
  int a_head = 0, b_head = 0;  // ring slot of the first unconsumed key
  int a_have = 0, b_have = 0;  // unconsumed keys in each ring
  bool a_descends = false, b_descends = false;  // adjacent keys out of order among those loaded

  while (out_pos < out_end) {
    // Top both rings up to TILE keys (or what is left of the block's inputs).
    const int a_new = (int)(a_end - a_next < (size_type)(TILE - a_have) ? a_end - a_next : TILE - a_have);
    const int b_new = (int)(b_end - b_next < (size_type)(TILE - b_have) ? b_end - b_next : TILE - b_have);
    // The free slots follow the unconsumed keys: slot (head + have + i) mod TILE.
    const int a_free = ring_slot(a_head, a_have);
    const int b_free = ring_slot(b_head, b_have);
    a_descends |= load_checked(a, a_next, a_new, a_ring, [a_free](int i) { return ring_slot(a_free, i); });
    b_descends |= load_checked(b, b_next, b_new, b_ring, [b_free](int i) { return ring_slot(b_free, i); });
    a_have += a_new;
    b_have += b_new;
    a_next += a_new;
    b_next += b_new;
    __syncthreads();

    const ring_view a_view = {a_ring, a_head};
    const ring_view b_view = {b_ring, b_head};
    const int out_cnt = (int)(out_end - out_pos < TILE ? out_end - out_pos : TILE);
    const ring_pair keys = {a_view, a_have, b_view};
    int b_used;
    const int a_used = merge_tile(a_view, a_have, b_view, b_have, keys, out_cnt, out_pos, out, a_vals + a_pos,
                                  b_vals + b_pos, out_vals, ends, check, &b_used);
    __syncthreads();  // every thread is done reading the rings
    a_head = ring_slot(a_head, a_used);
    b_head = ring_slot(b_head, b_used);
    a_have -= a_used;
    b_have -= b_used;
    a_pos += a_used;
    b_pos += b_used;
    out_pos += out_cnt;
  }
  if (a_descends || b_descends) twophase::raise_status(check, descent_bits(a_descends, b_descends));
}
